import CodableDefaultsThreadLocal
import Observation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Observation (`withObservationTracking`, SwiftUI) tracks reads by (object, key path). The store is the object
// for every `Defaults` on its file: each name has the key path `\Store.[observed: .name(n)]`, and the set of
// names (what `keys` and `dictionaryRepresentation()` depend on) has `\Store.[observed: .membership]`.
//
// Cost. A key path with an argument costs microseconds to make, so each name's path is made once, under the
// lock, the first time a tracked read reads it, and kept in its cell. Observation offers no way to ask
// whether a read is tracked, so every read first reports the probe path, made once: outside any
// tracking that is a thread-local check and nothing else. Inside a tracking, Observation adds the probe
// to its list of reads, which hashes it, and hashing the probe sets a flag of the reading thread: that is
// how the read learns it is tracked, and only then does it take the lock, mark its cell as tracked and report
// the name's own path. A name no tracked read ever read costs a set nothing (no registrar call, no lock);
// a tracked name's changes go through ``publish(_:)`` like those of an observed one. The probe is never
// changed, so it never fires anyone.

/// What the store's key paths for Observation name: the probe, one member name, or the set of names.
struct ObservedMember: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        case probe
        case name(MemberName)
        case membership
    }

    let kind: Kind

    static func == (lhs: ObservedMember, rhs: ObservedMember) -> Bool { lhs.kind == rhs.kind }

    func hash(into hasher: inout Hasher) {
        // Observation hashes the paths of a tracked read on the reading thread: the probe's hash is the signal.
        if case .probe = kind { TrackedRead.signal() }
        hasher.combine(kind)
    }
}

/// A count per thread of the probe's hashes: a read compares it before and after reporting the probe, so a
/// hash made by Observation at another moment (installing or cancelling a tracking) is not taken for a
/// tracked read.
enum TrackedRead {
    /// The calling thread's count (a C `_Thread_local`: one load, no call).
    @inline(__always)
    static var count: Int { Int(bitPattern: codable_defaults_probe_hash_count()) }

    /// Counts one hash of the probe on the calling thread.
    static func signal() {
        codable_defaults_count_probe_hash()
    }
}

/// The key paths that are the same for every store (a path's identity is its components, not the object).
enum ObservedPaths {
    /// The probe every read reports (see the top of this file).
    static let probe: any KeyPath<Store, Void> & Sendable = \Store.[observed: ObservedMember(kind: .probe)]
    /// The set of names.
    static let membership: any KeyPath<Store, Void> & Sendable = \Store.[observed: ObservedMember(kind: .membership)]
}

/// Which names' presence a tracked read of the set of names saw, kept so a change of presence (not of
/// value) fires the membership path.
struct Membership {
    /// The names with a stored value (`keys`).
    var stored: Set<MemberName>
    /// The names with a value in any domain (`dictionaryRepresentation()`).
    var effective: Set<MemberName>
}

extension Store: Observable {
    /// The path Observation tracks a name by (the value is never read: the path is the identity).
    subscript(observed member: ObservedMember) -> Void { () }

    // MARK: Reads

    /// Reports a read of `name` to Observation. Outside any tracking this is the probe's thread-local check.
    @inline(__always)
    func trackRead(of name: String) {
        let before = TrackedRead.count
        registrar.access(self, keyPath: ObservedPaths.probe)
        if TrackedRead.count != before { trackTrackedRead(of: name) }
    }

    /// Reports a read of the set of names (`keys`, `dictionaryRepresentation()`) to Observation.
    func trackMembershipRead() {
        let before = TrackedRead.count
        registrar.access(self, keyPath: ObservedPaths.probe)
        guard TrackedRead.count != before else { return }
        state.withLock { state in
            if state.membership != nil { return }
            var membership = Membership(stored: [], effective: [])
            for (name, cell) in state.cells where !cell.isReserved {
                if cell.stored.isPresent { membership.stored.insert(name) }
                if cell.effective.isPresent { membership.effective.insert(name) }
            }
            state.forEachStoredName { name, cell in
                guard cell == nil && name != Defaults.schemaVersionKey else { return }
                membership.stored.insert(MemberName(name))
                membership.effective.insert(MemberName(name))
            }
            state.layers.forEachListedName { name in
                if state.cells[MemberName(name)] == nil { membership.effective.insert(MemberName(name)) }
            }
            state.membership = membership
        }
        startWatching()
        registrar.access(self, keyPath: ObservedPaths.membership)
    }

    /// A tracked read of `name`: makes its path (once), marks its cell, starts watching the storage.
    private func trackTrackedRead(of name: String) {
        let path: KeyPath<Store, Void> = state.withLock { state in
            let cell = state.cell(named: name)
            if let path = cell.observedPath { return path }
            let path = \Store.[observed: ObservedMember(kind: .name(MemberName(name)))]
            cell.observedPath = path
            return path
        }
        // A tracked read is told of another process's save, so it starts the watcher (a no-op once started).
        startWatching()
        registrar.access(self, keyPath: path)
    }

    // MARK: Changes

    /// The paths a change of `names` fires: those of tracked names, and the membership path when a name's
    /// presence changed. Called by ``publish(_:)`` with the lock held; updates the remembered presence.
    static func observedPaths(for names: Set<MemberName>, in state: inout StoreState) -> [KeyPath<Store, Void>] {
        var paths: [KeyPath<Store, Void>] = []
        guard var membership = state.membership else {
            for name in names { if let path = state.cells[name]?.observedPath { paths.append(path) } }
            return paths
        }
        var membershipChanged = false
        for name in names {
            guard let cell = state.cells[name] else { continue }
            if let path = cell.observedPath { paths.append(path) }
            guard !cell.isReserved else { continue }
            if cell.stored.isPresent != membership.stored.contains(name) {
                membershipChanged = true
                if cell.stored.isPresent { membership.stored.insert(name) } else { membership.stored.remove(name) }
            }
            if cell.effective.isPresent != membership.effective.contains(name) {
                membershipChanged = true
                if cell.effective.isPresent {
                    membership.effective.insert(name)
                } else {
                    membership.effective.remove(name)
                }
            }
        }
        state.membership = membership
        if membershipChanged { paths.append(ObservedPaths.membership) }
        return paths
    }

    /// Tells Observation that the values at `paths` changed: their trackings' `onChange` run now, on this
    /// thread. Call without the store's lock (those closures are user code).
    func fireObservation(_ paths: [KeyPath<Store, Void>]) {
        for path in paths { registrar.willSet(self, keyPath: path) }
        for path in paths { registrar.didSet(self, keyPath: path) }
    }
}
