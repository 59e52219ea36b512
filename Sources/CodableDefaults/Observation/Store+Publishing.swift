extension Store {
    // MARK: Observers

    /// Registers an observer of one name, and starts noticing outside changes.
    func addObserver(_ observer: Observer, name: String) {
        state.withLock { state in
            state.cell(named: name).observers.append(observer)
        }
        startWatching()
    }

    /// Unregisters an observer of one name.
    func removeObserver(_ observer: Observer, name: String) {
        state.withLock { state in
            guard let cell = state.members.cells[MemberName(name)],
                let index = cell.observers.firstIndex(where: { $0 === observer })
            else { return }
            cell.observers.remove(at: index)
        }
    }

    /// Registers an observer of every change, and starts noticing outside changes.
    func addAllObserver(_ observer: AllObserver) {
        state.withLock { state in
            state.observers.all.append(observer)
        }
        startWatching()
    }

    /// Unregisters an observer of every change.
    func removeAllObserver(_ observer: AllObserver) {
        state.withLock { state in
            guard let index = state.observers.all.firstIndex(where: { $0 === observer }) else { return }
            state.observers.all.remove(at: index)
        }
    }

    /// Tells the observers of `names`, and the observers of every change, that those names changed: the one
    /// place every change reaches observers, local or outside. Runs the handlers on the calling thread; call
    /// without holding any of the store's locks.
    func publish(_ names: Set<MemberName>) {
        guard !names.isEmpty else { return }
        var paths: [KeyPath<Store, Void>] = []
        let observers: [Observer] = state.withLock { state in
            paths = Store.observedPaths(for: names, in: &state)
            var observers: [Observer] = []
            for name in names {
                if let cell = state.members.cells[name] { observers.append(contentsOf: cell.observers) }
            }
            // An observer of several names (`updates(forAnyOf:)`) is registered under each: told once per change.
            if names.count > 1 && observers.count > 1 {
                var seen = Set<ObjectIdentifier>()
                observers.removeAll { !seen.insert(ObjectIdentifier($0)).inserted }
            }
            observers.append(contentsOf: state.observers.all)
            return observers
        }
        fireObservation(paths)
        for observer in observers { observer.deliver(names: names) }
    }

    // MARK: Outside changes

    /// Starts noticing outside changes to the storage (no-op when already started).
    func startWatching() {
        storage.startWatching(on: queue) { [weak self] in self?.takeInOutsideChanges() }
    }

    /// Takes in what changed in the storage since the store last read or wrote it, and notifies observers of
    /// what changed, then reports what the storage noticed on its own (``RemoteStorage/takeNotices()``). Runs on the
    /// store's queue. Data that does not parse is reported once per version and leaves the store as it was.
    func takeInOutsideChanges() {
        defer { for notice in remote?.takeNotices() ?? [] { report(notice) } }
        do throws(DefaultsError) {
            let changed = try saveLock.withLock("taking in outside changes") {
                () throws(DefaultsError) -> Set<MemberName> in
                guard let content = try storage.outsideChanges() else { return [] }
                return state.withLock { state in
                    state.errors.loadFailure = nil
                    return state.takeIn(content)
                }
            }
            publish(changed)
        } catch {
            report(error)
        }
    }
}
