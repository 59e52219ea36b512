#include "CodableDefaultsThreadLocal.h"

_Thread_local uintptr_t codable_defaults_probe_hashes = 0;
