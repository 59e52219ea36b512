/// The values of a store: what its storage last reported whole, the cells of the names in use, and the cells with
/// unsaved changes. Part of ``StoreState``, under the store's lock.
struct MemberState {
    /// What the storage holds for names without a cell: its last whole read, or the image its last write made.
    var base = StoredMembers.empty
    /// The names in use, by name, byte-exact (see ``MemberName``).
    var cells: [MemberName: Cell] = [:]
    /// Cells whose `isDirty` is set (and, between saves, some whose flag was cleared), each once: changed only
    /// through ``markDirty(_:)`` and ``pruneDirty()``.
    private(set) var dirty: [Cell] = []

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
}

/// The typed caches of a store: one slot per key object that read or set a value, found by the key's identity.
/// Part of ``StoreState``, under the store's lock.
///
/// A slot holds its key's ``KeyLifetime`` weakly; the key knows nothing of the stores it is used with. The slots of
/// keys that no longer exist are dropped when a new slot would take the table past twice the number it held after the
/// last sweep (at least ``sweepFloor``), so a program that makes key objects in a loop keeps a bounded table, at an
/// amortized cost of one weak load per slot made.
struct TypedCaches {
    /// The slots, by key identity.
    private(set) var slots: [Int: AnySlot] = [:]
    /// The table's size at which the next new slot sweeps the slots of released keys first.
    private var sweepAt = Self.sweepFloor

    /// The smallest table that is ever swept.
    static let sweepFloor = 8

    /// The slot of the key with identity `id`, if it has one.
    @inline(__always)
    subscript(id: Int) -> AnySlot? { slots[id] }

    /// Puts a key's slot in place (replacing the one it had).
    mutating func install(_ slot: AnySlot, for key: Defaults.AnyKey) {
        slot.keyLifetime = key.lifetime
        if key.isSecret { slot.cell.isSecret = true }
        if slots.updateValue(slot, forKey: key.id) == nil && slots.count >= sweepAt {
            slots = slots.filter { $0.value.keyLifetime != nil }
            sweepAt = Swift.max(Self.sweepFloor, 2 * slots.count)
        }
    }
}

/// The read-only layers of a store (see ``Defaults/Layer``). Part of ``StoreState``, under the store's lock.
struct LayerState {
    /// The layers as last read.
    var stack = LayerStack()
    /// The watchers of the layers' files and directories.
    var watchers: [FileWatcher] = []
    /// The last error of reading each layer again (by position, overrides first), reported once.
    var errors: [Int: DefaultsError] = [:]
}

/// Who a store tells of changes besides each cell's own observers. Part of ``StoreState``, under the store's lock.
struct ObserverState {
    /// Observers of every change, for `observeAll`.
    var all: [AllObserver] = []
    /// The presence of each name as a tracked read of the set of names saw it; `nil` until there is one.
    var membership: Membership?
}

/// Where a store's errors go. Part of ``StoreState``, under the store's lock.
struct ErrorState {
    /// Receives the errors no caller can be thrown to.
    var handler: @Sendable (DefaultsError) -> Void = Store.printError
    /// Why the store failed to load, for a store opened without throwing; cleared by a successful read.
    var loadFailure: DefaultsError?
    /// The history records already reported as skipped (by their description), so each is reported once.
    var reportedHistoryNotices: Set<String> = []
}
