/// Everything a ``Store`` keeps in memory, reachable only through its ``Locked`` box: the members the storage
/// last reported whole, the cells by name, the typed caches, the list of unsaved changes, the observers of every
/// change, the error handler, the save timer and the load error. The mutating helpers here are the only code that
/// changes cells.
///
/// A name's state is its cell when it has one, else its member in ``base``: a name of the file that no one has
/// used has no cell (no object, no `String`, no copy of its value), and gets one, made from ``base``, when it is
/// first read, set, removed or observed. So a cell may differ from ``base`` (a change not yet saved, or saved
/// since), but a name without a cell never does.
struct StoreState {
    /// What the storage holds for names without a cell: its last whole read, or the image its last write made.
    var base = StoredMembers.empty
    /// The read-only layers around the stored values (see ``Defaults/Layer``), as last read.
    var layers = LayerStack()
    /// The watchers of the layers' files and directories.
    var layerWatchers: [FileWatcher] = []
    /// The last error of reading each layer again (by position, overrides first), reported once.
    var layerErrors: [Int: DefaultsError] = [:]
    /// The names in use, by name, byte-exact (see ``MemberName``).
    var cells: [MemberName: Cell] = [:]
    /// The typed caches, by key identity.
    var slots: [Int: AnySlot] = [:]
    /// Cells whose `isDirty` is set (and, between saves, some whose flag was cleared), each once: changed only
    /// through ``markDirty(_:)`` and ``pruneDirty()``.
    private(set) var dirty: [Cell] = []
    /// Observers of every change, for `observeAll`.
    var allObservers: [AllObserver] = []
    /// How many observers are registered (for tests).
    var observerCount = 0
    /// Receives the errors no caller can be thrown to.
    var errorHandler: @Sendable (DefaultsError) -> Void = Store.printError
    /// The `.afterIdle` save timer.
    var timer = SaveTimer()
    /// Why the store failed to load, for a store opened without throwing; cleared by a successful read.
    var loadFailure: DefaultsError?
    /// The presence of each name as a tracked read of the set of names saw it; `nil` until there is one.
    var membership: Membership?
    /// The thread running a ``Store/modify(_:_:)`` closure, which holds the save lock (see `Store+Modify.swift`).
    var modifyingThread: ModifyingThread?

    /// The cell for `name`, made on first use (from its member in ``base`` when it has one).
    @inline(__always)
    mutating func cell(named name: String) -> Cell {
        let key = MemberName(name)
        if let cell = cells[key] { return cell }
        return makeCell(name, key: key)
    }

    /// The cell for `name` when the name has a cell, a member in ``base`` or a layer's value; `nil` for a name
    /// never used and not stored anywhere, which then gets no cell.
    mutating func existingCell(named name: String) -> Cell? {
        let key = MemberName(name)
        if let cell = cells[key] { return cell }
        guard base.contains(name) || layers.override(for: name) != nil || layers.fallback(for: name) != nil else {
            return nil
        }
        return makeCell(name, key: key)
    }

    /// Makes the cell of a name that has none: its stored and saved value are its member in ``base``, its layers'
    /// values those the layers hold for it.
    private mutating func makeCell(_ name: String, key: MemberName) -> Cell {
        let cell = Cell(name: name)
        // A store with nothing read (grown by sets, in memory) has no base to look in: no hashing for a miss.
        if !base.isEmpty, let value = base.value(named: name) {
            cell.stored = .raw(value)
            cell.saved = value
        }
        if !layers.isEmpty {
            cell.overridden = layers.override(for: name)
            cell.fallback = layers.fallback(for: name)
        }
        cells[key] = cell
        return cell
    }

    /// Gives every member of ``base`` a cell (before a change of every stored name).
    mutating func makeAllCells() {
        var names: [String] = []
        names.reserveCapacity(base.count)
        base.forEachName { names.append($0) }
        for name in names { _ = cell(named: name) }
    }

    /// Calls `body` with each name that has a stored value, with its cell when it has one (`nil`: its value is
    /// its member in ``base``).
    func forEachStoredName(_ body: (String, Cell?) -> Void) {
        for cell in cells.values where cell.stored.isPresent { body(cell.name, cell) }
        base.forEachName { name in
            if cells[MemberName(name)] == nil { body(name, nil) }
        }
    }

    /// Replaces a cell's value and marks it for the next save.
    mutating func store(_ value: StoredValue, in cell: Cell) {
        cell.stored = value
        cell.version &+= 1
        markDirty(cell)
    }

    /// Marks a cell for the next save, listing it in ``dirty`` unless it is there already (a cell whose flag a
    /// modify, a failed encoding or a discard cleared stays listed until the next ``pruneDirty()``).
    mutating func markDirty(_ cell: Cell) {
        cell.isDirty = true
        if !cell.isListedAsDirty {
            cell.isListedAsDirty = true
            dirty.append(cell)
        }
    }

    /// Drops from ``dirty`` the cells whose flag was cleared.
    mutating func pruneDirty() {
        dirty.removeAll { cell in
            if cell.isDirty { return false }
            cell.isListedAsDirty = false
            return true
        }
    }

    /// Puts a key's cache slot in place.
    mutating func install(_ slot: AnySlot, for key: Defaults.Keys, in store: Store) {
        if slots.updateValue(slot, forKey: key.id) == nil { key.track(store) }
    }

    /// Whether a change of `cell` has anyone to tell.
    @inline(__always)
    func isObserved(_ cell: Cell) -> Bool {
        cell.hasObservers || !allObservers.isEmpty || membership != nil
    }

    /// Puts every cell's layer values in step with ``layers`` (after they were set or one was read again), and
    /// gives a cell to each name a layer lists when an `observeAll` observer or a tracked list of names is there
    /// to hear of it. Returns the names whose layer values changed.
    mutating func refreshLayerValues(previous: LayerStack) -> Set<MemberName> {
        var changed = Set<MemberName>()
        for (name, cell) in cells {
            let overridden = layers.override(for: cell.name)
            let fallback = layers.fallback(for: cell.name)
            guard overridden != cell.overridden || fallback != cell.fallback else { continue }
            let before = Self.visible(cell.argument != nil, cell.overridden, cell.stored.isPresent, cell.fallback)
            cell.overridden = overridden
            cell.fallback = fallback
            // A layer value hidden by a domain above it (a fallback under a stored value) changes no read.
            guard before != Self.visible(cell.argument != nil, overridden, cell.stored.isPresent, fallback) else {
                continue
            }
            cell.version &+= 1
            changed.insert(name)
        }
        guard !allObservers.isEmpty || membership != nil else { return changed }
        var listed = Set<MemberName>()
        previous.forEachListedName { listed.insert(MemberName($0)) }
        layers.forEachListedName { listed.insert(MemberName($0)) }
        for name in listed where cells[name] == nil {
            let isStored = base.contains(name.string)
            let before = Self.visible(
                false, previous.override(for: name.string), isStored, previous.fallback(for: name.string))
            let after = Self.visible(
                false, layers.override(for: name.string), isStored, layers.fallback(for: name.string))
            guard before != after else { continue }
            _ = cell(named: name.string)
            changed.insert(name)
        }
        return changed
    }

    /// The layer value a read gives, when a layer wins the lookup order (`nil` when a domain does): the argument
    /// domain hides every layer, an override wins over the stored value, a fallback only shows with nothing stored.
    private static func visible(
        _ hasArgument: Bool, _ overridden: LayerValue?, _ isStored: Bool, _ fallback: LayerValue?
    ) -> LayerValue? {
        if hasArgument { return nil }
        if let overridden { return overridden }
        return isStored ? nil : fallback
    }

    // MARK: Taking in what the storage holds

    /// Takes in what the storage reports: every member (a read), or some members (a watch). The members
    /// become the saved values, and the stored values of cells without unsaved changes. Returns the names
    /// whose stored value changed.
    mutating func takeIn(_ content: StorageContent) -> Set<MemberName> {
        switch content {
        case .snapshot(let members): return takeIn(snapshot: members)
        case .changes(let changes):
            var changed = Set<MemberName>()
            for change in changes {
                let cell = cell(named: change.name)
                if takeIn(change.value, for: cell) {
                    changed.insert(MemberName(change.name))
                } else if change.value == nil && !cell.isDirty {
                    // Still without a value, yet the engine reported the name: it may now hold a value the store
                    // cannot take (text that is not JSON, see `Storage.unreadableValue(named:secret:)`), or no longer
                    // hold one. A new version makes a cached read ask again; nobody is told (the value read is the
                    // same).
                    cell.version &+= 1
                }
            }
            return changed
        }
    }

    /// Takes in every member: they become ``base``, and each cell takes in its member's value (names without one
    /// lose their saved and, unless changed, stored value).
    ///
    /// Names without a cell change silently: nobody observes them, except an `observeAll` observer and a tracked
    /// read of the set of names, which hear of each name whose member differs (and which gets a cell, so that
    /// ``Store/publish(_:)`` finds its state).
    mutating func takeIn(snapshot members: StoredMembers) -> Set<MemberName> {
        let old = base
        base = members
        var changed = Set<MemberName>()
        for (name, cell) in cells where takeIn(members.value(named: cell.name), for: cell) {
            changed.insert(name)
        }
        guard !allObservers.isEmpty || membership != nil else { return changed }
        var changedWithoutCell: [String] = []
        members.forEachName { name in
            if cells[MemberName(name)] == nil && old.value(named: name) != members.value(named: name) {
                changedWithoutCell.append(name)
            }
        }
        old.forEachName { name in
            if cells[MemberName(name)] == nil && !members.contains(name) { changedWithoutCell.append(name) }
        }
        for name in changedWithoutCell {
            _ = cell(named: name)
            changed.insert(MemberName(name))
        }
        return changed
    }

    /// Makes `fragment` the cell's saved value, and its stored value unless it has an unsaved change.
    /// Returns whether the stored value changed.
    private func takeIn(_ fragment: [UInt8]?, for cell: Cell) -> Bool {
        cell.saved = fragment
        guard !cell.isDirty else { return false }
        switch (cell.stored, fragment) {
        case (.absent, nil): return false
        case (.raw(let current), let fragment?) where current == fragment: return false
        default: break
        }
        cell.stored = fragment.map { .raw($0) } ?? .absent
        cell.version &+= 1
        return true
    }
}
