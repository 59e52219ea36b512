import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The storage contract (``StorageContract``) on the memory engine and on the JSON file; the etcd tests run it on
/// etcd.
@Suite struct StorageContractTests {
    /// The memory engine: each store its own data; another writer is what the engine reports as outside changes.
    struct Memory: StorageContractSubject {
        var sharesData: Bool { false }
        var keepsHistory: Bool { false }

        func open() async throws -> Defaults {
            Defaults(store: Store(storage: MemoryStorage(), options: .default), saveMode: .manual, url: nil)
        }

        func writeAsAnotherWriter(_ values: [String: JSONValue?], besides defaults: Defaults) async throws {
            let storage = try #require(defaults.engine as? MemoryStorage)
            storage.inject(
                try values.map { name, value in
                    MemberChange(
                        name: name, value: try value.map { try JSONValueBytes.fragment($0, key: name, maxDepth: 64) })
                })
            defaults.store.takeInOutsideChanges()
        }

        func storeText(_ text: String, named name: String, besides defaults: Defaults) async throws -> Bool { false }
    }

    /// The JSON file: every store a fresh handle on one file; another writer is another store on it.
    struct File: StorageContractSubject {
        let directory: TemporaryDirectory
        var sharesData: Bool { true }
        var keepsHistory: Bool { true }

        func open() async throws -> Defaults { try openFresh(directory.file()) }

        func writeAsAnotherWriter(_ values: [String: JSONValue?], besides defaults: Defaults) async throws {
            let other = try openFresh(directory.file())
            for (name, value) in values { other.set(value, forKey: name) }
            try await other.save()
        }

        func storeText(_ text: String, named name: String, besides defaults: Defaults) async throws -> Bool { false }
    }

    @Test(arguments: StorageContract.allCases) func memory(_ check: StorageContract) async throws {
        try await check.check(Memory())
    }

    @Test(arguments: StorageContract.allCases) func file(_ check: StorageContract) async throws {
        try await check.check(File(directory: try TemporaryDirectory()))
    }
}
