import CodableDefaults
import Foundation
import Testing

/// An engine the storage contract runs on (``StorageContract``): how to open stores on its data, and how another
/// writer or another tool changes that data.
package protocol StorageContractSubject: Sendable {
    /// Opens a store (saving `.manual`) on the subject's data: a new handle at each call. On an engine whose data
    /// outlives a store (``sharesData``), every handle is on the same data.
    func open() async throws -> Defaults

    /// Whether a second ``open()`` is another writer of the same data (a file, an etcd prefix); not for memory,
    /// whose data is its store's own.
    var sharesData: Bool { get }

    /// Whether the engine keeps a history of the saves.
    var keepsHistory: Bool { get }

    /// Stores `values` (`nil`: removed) in the data `defaults` is open on, as another writer would: another store
    /// on the same data, or, for memory, changes the engine reports as outside changes.
    func writeAsAnotherWriter(_ values: [String: JSONValue?], besides defaults: Defaults) async throws

    /// Stores `text`, which is not JSON, as the value of `name` in the data `defaults` is open on, as another tool
    /// would; `false` when the engine cannot hold such a value (a JSON file, memory).
    func storeText(_ text: String, named name: String, besides defaults: Defaults) async throws -> Bool
}

/// What every storage engine does, checked through the store on each engine (as swift-configuration's
/// `ProviderCompatTest` checks each provider): memory and the JSON file in the unit tests, etcd in the etcd tests.
package enum StorageContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A save stores every change; a new handle (or, in memory, a reload) reads each value back.
    case savedValuesAreReadBack
    /// Merging is key by key: another writer's keys survive this store's save, and this store's change of a key
    /// both changed wins.
    case mergesKeyByKeyAndTheStoresChangeWins
    /// Another writer's change and removal reach the store's reads and its observer.
    case outsideChangesReachReadsAndObservers
    /// `modify` is atomic: two writers (or, in memory, two threads) each adding one 100 times count 200.
    case modifyIsAtomicAcrossWriters
    /// Each save is recorded with its changes, newest first, and undo takes the last back, for every writer; an
    /// engine that keeps no history says so.
    case historyRecordsEachSaveAndUndoTakesItBack
    /// A published schema reads back as it was made, from every handle.
    case aPublishedSchemaReadsBack
    /// A value another tool stored that is not JSON reads as the default with a `decodingFailed` error, stays as
    /// it is through saves of other keys, and gives way only to a write of its own name.
    case valuesThatAreNotJSONReadAsTheDefaultAndAreKept

    package var testDescription: String { rawValue }

    /// Runs this check on `subject`.
    package func check(_ subject: some StorageContractSubject) async throws {
        switch self {
        case .savedValuesAreReadBack: try await savedValuesAreReadBack(subject)
        case .mergesKeyByKeyAndTheStoresChangeWins: try await mergesKeyByKey(subject)
        case .outsideChangesReachReadsAndObservers: try await outsideChangesReachTheStore(subject)
        case .modifyIsAtomicAcrossWriters: try await modifyIsAtomic(subject)
        case .historyRecordsEachSaveAndUndoTakesItBack: try await historyAndUndo(subject)
        case .aPublishedSchemaReadsBack: try await schemaRoundTrip(subject)
        case .valuesThatAreNotJSONReadAsTheDefaultAndAreKept: try await unreadableValues(subject)
        }
    }

    private static let volume = Defaults.Key<Double>("volume", default: 0.5)
    private static let profile = Defaults.Key<Profile?>("profile")
    private static let count = Defaults.Key<Int>("count", default: 0)

    /// What `defaults` holds once it read its data again: a new handle where the data is shared, else the same
    /// store reloaded.
    private func reread(_ defaults: Defaults, _ subject: some StorageContractSubject) async throws -> Defaults {
        guard subject.sharesData else {
            try await defaults.reload()
            return defaults
        }
        return try await subject.open()
    }

    private func savedValuesAreReadBack(_ subject: some StorageContractSubject) async throws {
        let defaults = try await subject.open()
        defaults[Self.volume] = 0.25
        defaults[Self.profile] = Profile(name: "Ann", age: 3)
        defaults.set("ünïcödé \u{1F600}", forKey: "text")
        let nested: JSONValue = ["a": 1, "b": [true, false]]
        defaults.set(nested, forKey: "nested")
        try await defaults.save()
        let other = try await reread(defaults, subject)
        #expect(other[Self.volume] == 0.25)
        #expect(other[Self.profile] == Profile(name: "Ann", age: 3))
        #expect(other.string(forKey: "text") == "ünïcödé \u{1F600}")
        #expect(other.object(forKey: "nested") == nested)
        defaults.reset(Self.volume)
        try await defaults.save()
        #expect(try await reread(defaults, subject).hasStoredValue(for: Self.volume) == false)
    }

    private func mergesKeyByKey(_ subject: some StorageContractSubject) async throws {
        let defaults = try await subject.open()
        defaults.set(1, forKey: "mine")
        try await defaults.save()
        try await subject.writeAsAnotherWriter(["theirs": 2, "both": 3], besides: defaults)
        defaults.set(4, forKey: "both")
        try await defaults.save()
        let other = try await reread(defaults, subject)
        #expect(other.integer(forKey: "mine") == 1)
        #expect(other.integer(forKey: "theirs") == 2, "another writer's key survives the store's save")
        #expect(other.integer(forKey: "both") == 4, "the store's change of a key both changed wins")
    }

    private func outsideChangesReachTheStore(_ subject: some StorageContractSubject) async throws {
        let defaults = try await subject.open()
        let seen = Recorder<String>()
        let token = defaults.observe(forKey: "theirs") { change in
            seen.append(change.newValue.map { "\($0)" } ?? "none")
        }
        defer { token.cancel() }
        defaults.startWatching()
        try await subject.writeAsAnotherWriter(["theirs": 7], besides: defaults)
        #expect(try await eventually(timeout: 60) { defaults.integer(forKey: "theirs") == 7 })
        #expect(try await eventually(timeout: 60) { seen.values.last == "7" }, "\(seen.values)")
        try await subject.writeAsAnotherWriter(["theirs": nil], besides: defaults)
        #expect(try await eventually(timeout: 60) { defaults.object(forKey: "theirs") == nil })
        #expect(try await eventually(timeout: 60) { seen.values.last == "none" }, "\(seen.values)")
    }

    private func modifyIsAtomic(_ subject: some StorageContractSubject) async throws {
        let first = try await subject.open()
        let second = subject.sharesData ? try await subject.open() : first
        let results = try await withThrowingTaskGroup(of: Void.self) { group in
            for defaults in [first, second] {
                group.addTask {
                    try await offPool {
                        for _ in 0..<100 { try defaults.modify(Self.count) { $0 += 1 } }
                    }
                }
            }
            return try await group.reduce(into: 0) { count, _ in count += 1 }
        }
        #expect(results == 2)
        #expect(try await reread(first, subject)[Self.count] == 200)
    }

    private func historyAndUndo(_ subject: some StorageContractSubject) async throws {
        let defaults = try await subject.open()
        defaults[Self.volume] = 0.1
        try await defaults.save()
        defaults[Self.volume] = 0.2
        try await defaults.save()
        guard subject.keepsHistory else {
            await #expect(try defaults.history().isEmpty)
            let refused = #expect(throws: DefaultsError.self) { try defaults.undo() }
            #expect(refused?.code == .historyUnavailable)
            return
        }
        let history = try await defaults.history()
        #expect(history.count == 2)
        #expect(history.first?.changes == [.init(key: "volume", oldValue: .json(0.1), newValue: .json(0.2))])
        #expect(history.map(\.revision) == history.map(\.revision).sorted(by: >), "newest first")
        let undone = try await defaults.undo()
        #expect(undone == [.init(key: "volume", oldValue: .json(0.2), newValue: .json(0.1))])
        let other = try await reread(defaults, subject)
        #expect(other[Self.volume] == 0.1)
        await #expect(try other.history().first?.kind == .revert(toRevision: history[1].revision))
    }

    private func schemaRoundTrip(_ subject: some StorageContractSubject) async throws {
        let defaults = try await subject.open()
        #expect(try defaults.publishedSchema() == nil)
        let keys: [Defaults.AnyKey] = [Self.volume, Self.profile, Self.count]
        try defaults.publishSchema(for: keys, title: "contract")
        let expected = try Defaults.schema(for: keys, title: "contract")
        #expect(try defaults.publishedSchema()?.json == expected)
        #expect(!defaults.schemaLocation.isEmpty)
        if subject.sharesData {
            #expect(try await subject.open().publishedSchema()?.json == expected)
        }
    }

    private func unreadableValues(_ subject: some StorageContractSubject) async throws {
        let defaults = try await subject.open()
        let key = Defaults.Key<Int>("bad", default: 5)
        guard try await subject.storeText("not json", named: "bad", besides: defaults) else { return }
        let reader = try await subject.open()
        #expect(reader[key] == 5)
        let error = #expect(throws: DefaultsError.self) { try reader.value(for: key) }
        #expect(error?.code == .decodingFailed)
        reader.set(1, forKey: "other")
        try await reader.save()
        let later = try await subject.open()
        #expect(throws: DefaultsError.self, "kept through a save of another key") { try later.value(for: key) }
        reader[key] = 9
        try await reader.save()
        #expect(try await subject.open()[key] == 9)
    }
}
