/// Everything a ``Store`` keeps in memory, reachable only through its ``Locked`` box: the cells by name,
/// the typed caches, the list of unsaved changes, the observers of every change, the error handler, the
/// save timer and the load error. The mutating helpers here are the only code that changes cells.
struct StoreState {
    /// By name, byte-exact (see ``MemberName``).
    var cells: [MemberName: Cell] = [:]
    /// The typed caches, by key identity.
    var slots: [Int: AnySlot] = [:]
    /// Cells whose `isDirty` is set (and, between saves, some whose flag was cleared).
    var dirty: [Cell] = []
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

    /// The cell for `name`, created on first use.
    @inline(__always)
    mutating func cell(named name: String) -> Cell {
        let key = MemberName(name)
        if let cell = cells[key] { return cell }
        let cell = Cell(name: name)
        cells[key] = cell
        return cell
    }

    /// Replaces a cell's value and marks it for the next save.
    mutating func store(_ value: StoredValue, in cell: Cell) {
        cell.stored = value
        cell.version &+= 1
        if !cell.isDirty {
            cell.isDirty = true
            dirty.append(cell)
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

    // MARK: Taking in what the storage holds

    /// Takes in what the storage reports: every member (a read), or some members (a watch). The members
    /// become the saved values, and the stored values of cells without unsaved changes. Returns the names
    /// whose stored value changed.
    mutating func takeIn(_ content: StorageContent) -> Set<MemberName> {
        switch content {
        case .snapshot(let members): return takeIn(snapshot: members)
        case .changes(let changes):
            var changed = Set<MemberName>()
            for change in changes where takeIn(change.value, for: cell(named: change.name)) {
                changed.insert(MemberName(change.name))
            }
            return changed
        }
    }

    /// Takes in every member; names without one lose their saved (and, unless changed, stored) value.
    mutating func takeIn(snapshot members: [DocumentMember]) -> Set<MemberName> {
        if cells.isEmpty {
            // The first load: no merging, and no change set (nobody observes a name without a cell), except
            // for an observeAll observer, which hears of every name.
            cells.reserveCapacity(members.count)
            for member in members {
                let cell = Cell(name: member.key)
                cell.stored = .raw(member.value)
                cell.saved = member.value
                cells[MemberName(member.key)] = cell
            }
            return allObservers.isEmpty ? [] : Set(members.map { MemberName($0.key) })
        }
        var incoming: [MemberName: [UInt8]] = [:]
        incoming.reserveCapacity(members.count)
        for member in members { incoming[MemberName(member.key)] = member.value }
        var changed = Set<MemberName>()
        for (name, cell) in cells where incoming[name] == nil && takeIn(nil, for: cell) {
            changed.insert(name)
        }
        for (name, fragment) in incoming where takeIn(fragment, for: cell(named: name.string)) {
            changed.insert(name)
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
