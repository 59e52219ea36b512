/// Everything a ``Store`` keeps in memory, reachable only through its ``Locked`` box, in parts with one purpose
/// each: the values (``members``), the typed caches (``caches``), the read-only layers (``layers``), who is told of
/// changes (``observers``), the errors (``errors``) and the `.afterIdle` save timer (``timer``). The parts share the
/// one lock because a change touches several at once (a set changes a cell, its cache slot and tells its
/// observers, atomically); the mutating helpers here, which join the parts, are the only code that changes cells.
///
/// A name's state is its cell when it has one, else its member in the storage's last report (``MemberState/base``):
/// a name of the file that no one has used has no cell (no object, no `String`, no copy of its value), and gets one,
/// made from that report, when it is first read, set, removed or observed. So a cell may differ from the base (a
/// change not yet saved, or saved since), but a name without a cell never does.
struct StoreState {
    /// The values: what the storage last reported, the cells in use, the unsaved changes.
    var members = MemberState()
    /// The typed caches of decoded values, by key identity.
    var caches = TypedCaches()
    /// The read-only layers around the stored values.
    var layers = LayerState()
    /// Who is told of changes (besides each cell's own observers).
    var observers = ObserverState()
    /// Where errors go, and why the store failed to load.
    var errors = ErrorState()
    /// The `.afterIdle` save timer.
    var timer = SaveTimer()
    /// How secret values are sealed and opened (``Defaults/Options/encryptionKey``): kept with the values, so that a
    /// read takes a value and the key that opens it in one critical section, whatever a rotation does meanwhile.
    private(set) var cipher = SecretCipher(key: nil)

    /// Makes `cipher` the store's, and makes every sealed value's decoded cache stale (its version bumped), so that a
    /// read opens it with the new key: a read that failed without the key, or with another, is not served again.
    mutating func setCipher(_ cipher: SecretCipher) {
        self.cipher = cipher
        for cell in members.cells.values where cell.stored.isSealed { cell.version &+= 1 }
    }

    /// The cell for `name`, made on first use (from its member in ``MemberState/base`` when it has one).
    @inline(__always)
    mutating func cell(named name: String) -> Cell {
        let key = MemberName(name)
        if let cell = members.cells[key] { return cell }
        return makeCell(name, key: key)
    }

    /// The cell for `name` when the name has a cell, a member in ``MemberState/base`` or a layer's value; `nil` for a
    /// name never used and not stored anywhere, which then gets no cell.
    mutating func existingCell(named name: String) -> Cell? {
        let key = MemberName(name)
        if let cell = members.cells[key] { return cell }
        guard
            members.base.contains(name) || layers.stack.override(for: name) != nil
                || layers.stack.fallback(for: name) != nil
        else {
            return nil
        }
        return makeCell(name, key: key)
    }

    /// Makes the cell of a name that has none: its stored and saved value are its member in ``MemberState/base``, its
    /// layers' values those the layers hold for it.
    private mutating func makeCell(_ name: String, key: MemberName) -> Cell {
        let cell = Cell(name: name)
        // A store with nothing read (grown by sets, in memory) has no base to look in: no hashing for a miss.
        if !members.base.isEmpty, let value = members.base.value(named: name) {
            cell.stored = .raw(value)
            cell.saved = value
        }
        if !layers.stack.isEmpty {
            cell.overridden = layers.stack.override(for: name)
            cell.fallback = layers.stack.fallback(for: name)
        }
        members.cells[key] = cell
        return cell
    }

    /// Gives every member of ``MemberState/base`` a cell (before a change of every stored name).
    mutating func makeAllCells() {
        var names: [String] = []
        names.reserveCapacity(members.base.count)
        members.base.forEachName { names.append($0) }
        for name in names { _ = cell(named: name) }
    }

    /// Calls `body` with each name that has a stored value, with its cell when it has one (`nil`: its value is
    /// its member in ``MemberState/base``).
    func forEachStoredName(_ body: (String, Cell?) -> Void) {
        for cell in members.cells.values where cell.stored.isPresent { body(cell.name, cell) }
        members.base.forEachName { name in
            if members.cells[MemberName(name)] == nil { body(name, nil) }
        }
    }

    /// Replaces a cell's value and marks it for the next save.
    mutating func store(_ value: StoredValue, in cell: Cell) {
        cell.stored = value
        cell.version &+= 1
        markDirty(cell)
    }

    /// Marks a cell for the next save (see ``MemberState/markDirty(_:)``).
    @inline(__always)
    mutating func markDirty(_ cell: Cell) { members.markDirty(cell) }

    /// Whether a change of `cell` has anyone to tell.
    @inline(__always)
    func isObserved(_ cell: Cell) -> Bool {
        cell.hasObservers || !observers.all.isEmpty || observers.membership != nil
    }

    /// Puts every cell's layer values in step with ``LayerState/stack`` (after they were set or one was read again),
    /// and gives a cell to each name a layer lists when an `observeAll` observer or a tracked list of names is there to
    /// hear of it. Returns the names whose layer values changed.
    mutating func refreshLayerValues(previous: LayerStack) -> Set<MemberName> {
        var changed = Set<MemberName>()
        for (name, cell) in members.cells {
            let overridden = layers.stack.override(for: cell.name)
            let fallback = layers.stack.fallback(for: cell.name)
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
        guard !observers.all.isEmpty || observers.membership != nil else { return changed }
        var listed = Set<MemberName>()
        previous.forEachListedName { listed.insert(MemberName($0)) }
        layers.stack.forEachListedName { listed.insert(MemberName($0)) }
        for name in listed where members.cells[name] == nil {
            let isStored = members.base.contains(name.string)
            let before = Self.visible(
                false, previous.override(for: name.string), isStored, previous.fallback(for: name.string))
            let after = Self.visible(
                false, layers.stack.override(for: name.string), isStored, layers.stack.fallback(for: name.string))
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
                    // cannot take (text that is not JSON, see `RemoteStorage.unreadableValue(named:secret:)`), or
                    // no longer hold one. A new version makes a cached read ask again; nobody is told (the value
                    // read is the same).
                    cell.version &+= 1
                }
            }
            return changed
        }
    }

    /// Takes in every member: they become ``MemberState/base``, and each cell takes in its member's value (names
    /// without one lose their saved and, unless changed, stored value).
    ///
    /// Names without a cell change silently: nobody observes them, except an `observeAll` observer and a tracked
    /// read of the set of names, which hear of each name whose member differs (and which gets a cell, so that
    /// ``Store/publish(_:)`` finds its state).
    mutating func takeIn(snapshot new: StoredMembers) -> Set<MemberName> {
        let old = members.base
        members.base = new
        var changed = Set<MemberName>()
        for (name, cell) in members.cells where takeIn(new.value(named: cell.name), for: cell) {
            changed.insert(name)
        }
        guard !observers.all.isEmpty || observers.membership != nil else { return changed }
        var changedWithoutCell: [String] = []
        new.forEachName { name in
            if members.cells[MemberName(name)] == nil && old.value(named: name) != new.value(named: name) {
                changedWithoutCell.append(name)
            }
        }
        old.forEachName { name in
            if members.cells[MemberName(name)] == nil && !new.contains(name) { changedWithoutCell.append(name) }
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
