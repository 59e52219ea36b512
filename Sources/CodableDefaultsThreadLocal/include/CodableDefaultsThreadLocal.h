// A thread-local counter for CodableDefaults' Observation support: how many times the calling thread hashed
// the store's probe key path (see Observation/Store+ObservationTracking.swift). C's `_Thread_local` is one load from the thread's
// block; `pthread_getspecific` is a function call, and the counter is read twice on every read of a value.
#ifndef CODABLE_DEFAULTS_THREAD_LOCAL_H
#define CODABLE_DEFAULTS_THREAD_LOCAL_H

#include <stdint.h>

extern _Thread_local uintptr_t codable_defaults_probe_hashes;

/// The calling thread's count.
static inline uintptr_t codable_defaults_probe_hash_count(void) { return codable_defaults_probe_hashes; }

/// Counts one hash of the probe on the calling thread.
static inline void codable_defaults_count_probe_hash(void) { codable_defaults_probe_hashes += 1; }

#endif
