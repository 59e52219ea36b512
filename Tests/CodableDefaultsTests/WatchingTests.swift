import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

@testable import CodableDefaults

/// Outside changes to the file reach the store and its observers.
@Suite struct WatchingTests {
    /// A store on `url` with an observer of `.count` recording new values.
    func observed(_ url: URL) throws -> (Defaults, Recorder<Int>, ObservationToken) {
        let defaults = try openFresh(url)
        let seen = Recorder<Int>()
        let token = defaults.observe(.count) { seen.append($0.newValue) }
        return (defaults, seen, token)
    }

    /// Another store saves a new value of a marker key, and this waits until every store in `stores` has
    /// seen it. A store handles outside events in order on its queue, so once it has seen the marker, it has
    /// handled every change made to the file before: the positive signal that lets a test check that
    /// something did not happen.
    func passMarker(_ url: URL, through stores: [Defaults]) async throws -> Bool {
        let marker = Defaults.Key<String>("marker", default: "")
        let value = UUID().uuidString
        let seen = Recorder<String>()
        let tokens = stores.map { store in store.observe(marker) { seen.append($0.newValue) } }
        let theirs = try openFresh(url)
        theirs[marker] = value
        try await theirs.save()
        let passed = try await eventually(timeout: 120) { seen.values.filter { $0 == value }.count == stores.count }
        _ = tokens
        return passed
    }

    @Test func watchingStartsWithTheFirstObserver() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        #expect(!defaults.store.isWatching)
        let token = defaults.observeAll { _ in }
        #expect(defaults.store.isWatching)
        _ = token
        #expect(!Defaults.inMemory().store.isWatching)
    }

    @Test func anotherStoresSaveIsNoticedWithoutASaveOrReload() async throws {
        let dir = try TemporaryDirectory()
        let (mine, seen, token) = try observed(dir.file())
        let theirs = try openFresh(dir.file())
        theirs[.count] = 3
        try await theirs.save()
        #expect(try await eventually { seen.values == [3] })
        #expect(mine[.count] == 3)
        theirs[.count] = 4
        try await theirs.save()
        #expect(try await eventually { seen.values == [3, 4] })
        _ = token
    }

    @Test func replacingTheFileWithMvIsNoticed() async throws {
        let dir = try TemporaryDirectory()
        let (_, seen, token) = try observed(dir.file())
        try write("{\"count\": 11}", to: dir.file("elsewhere.json"))
        #expect(rename(dir.file("elsewhere.json").path, dir.file().path) == 0)
        #expect(try await eventually { seen.values == [11] })
        _ = token
    }

    @Test func rewritingTheFileInPlaceIsNoticed() async throws {
        let dir = try TemporaryDirectory()
        try write("{\"count\": 1}", to: dir.file())
        let (mine, seen, token) = try observed(dir.file())
        // A watcher that looks between the truncation and the write finds an emptied file: it reports it
        // (here) and keeps its state, so observers hear only of the new value.
        let errors = ErrorLog()
        mine.onError = errors.handler
        let handle = try FileHandle(forWritingTo: dir.file())
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("{\"count\": 2}".utf8))
        try handle.close()
        #expect(try await eventually { seen.values == [2] })
        #expect(errors.errors.allSatisfy { $0.code == .invalidJSON }, "\(errors.errors)")
        _ = token
    }

    @Test func deletingAndRecreatingTheFileIsNoticed() async throws {
        let dir = try TemporaryDirectory()
        try write("{\"count\": 5}", to: dir.file())
        let (mine, seen, token) = try observed(dir.file())
        try FileManager.default.removeItem(at: dir.file())
        #expect(try await eventually { seen.values == [0] })
        #expect(!mine.hasStoredValue(for: .count))
        try write("{\"count\": 6}", to: dir.file())
        #expect(try await eventually { seen.values == [0, 6] })
        _ = token
    }

    @Test func invalidOutsideEditIsReportedOnceAndNeverOverwritten() async throws {
        let dir = try TemporaryDirectory()
        try write("{\"count\": 1}", to: dir.file())
        let (mine, seen, token) = try observed(dir.file())
        let errors = ErrorLog()
        mine.onError = errors.handler
        // Atomically, so the store can only ever see one bad version (an in-place write has an empty one too).
        try Data("{\"count\": 2,".utf8).write(to: dir.file(), options: .atomic)
        #expect(try await eventually { errors.errors.count == 1 })
        #expect(errors.errors.first?.code == .invalidJSON)
        #expect(mine[.count] == 1, "the last good state stays")
        mine[.volume] = 0.2
        #expect(throws: DefaultsError.self) { try mine.save() }
        #expect(try text(dir.file()) == "{\"count\": 2,")

        try write("{\"count\": 3}", to: dir.file())
        #expect(try await eventually { seen.values == [3] })
        // Every event about the bad version came before this one.
        #expect(errors.errors.count == 1, "reported once per version of the file: \(errors.errors)")
        try await mine.save()
        #expect(try text(dir.file()) == "{\n  \"count\": 3,\n  \"volume\": 0.2\n}\n")
        _ = token
    }

    @Test func ownWritesDoNotComeBackAsOutsideChanges() async throws {
        let dir = try TemporaryDirectory()
        let (mine, seen, token) = try observed(dir.file())
        let all = Recorder<Set<String>>()
        let allToken = mine.observeAll { all.append($0) }
        for value in 1...5 {
            mine[.count] = value
            try await mine.save()
        }
        #expect(try await passMarker(dir.file(), through: [mine]))
        // The marker's observer and this observeAll observer are told of the marker one after the other, on
        // the store's queue: wait for this one too before looking at everything it heard.
        #expect(try await eventually { all.values.last == ["marker"] })
        #expect(seen.values == [1, 2, 3, 4, 5])
        #expect(all.values == Array(repeating: ["count"], count: 5) + [["marker"]])
        _ = (token, allToken)
    }

    /// The store knows its own writes by the file's identity, so neither its next save nor the watcher reads
    /// the file again after one.
    @Test func ownWritesAreNeverReadBack() async throws {
        let dir = try TemporaryDirectory()
        try write("{\"count\": 0}", to: dir.file())
        let (mine, _, token) = try observed(dir.file())
        let readsAfterOpening = mine.store.readCount
        for value in 1...5 {
            mine[.count] = value
            try await mine.save()
        }
        #expect(try await passMarker(dir.file(), through: [mine]))
        #expect(mine.store.readCount == readsAfterOpening + 1, "reads after opening: \(mine.store.readCount)")
        _ = token
    }

    @Test func twoObservingWritersDoNotPingPong() async throws {
        let dir = try TemporaryDirectory()
        let a = try openFresh(dir.file(), saveMode: .immediate)
        let b = try openFresh(dir.file(), saveMode: .immediate)
        // Each mirrors what it sees into the file again: with real change detection this settles at once.
        let aSeen = Recorder<Int>()
        let bSeen = Recorder<Int>()
        let aToken = a.observe(.count) { change in
            a[.count] = change.newValue
            aSeen.append(change.newValue)
        }
        let bToken = b.observe(.count) { change in
            b[.count] = change.newValue
            bSeen.append(change.newValue)
        }
        a[.count] = 1
        #expect(try await eventually { bSeen.values == [1] })
        let writes = a.store.writeCount + b.store.writeCount
        #expect(try await passMarker(dir.file(), through: [a, b]))
        #expect(a.store.writeCount + b.store.writeCount == writes)
        #expect(aSeen.values == [1])
        _ = (aToken, bToken)
    }

    @Test func missingDirectoryFallsBackToPollingAndStillNotices() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("later/settings.json")
        let (mine, seen, token) = try observed(url)
        #expect(try await eventually { mine.store.isPolling })
        let theirs = try openFresh(url)
        theirs[.count] = 9
        try await theirs.save()
        #expect(try await eventually { seen.values == [9] })
        // Once the directory exists, it upgrades to events.
        #expect(try await eventually { !mine.store.isPolling })
        _ = token
    }

    /// Counts descriptors through `/proc/self/fd`, and inotify instances by their link text: Linux only.
    @Test(.enabled(if: hasProcFileSystem, "needs Linux: counts descriptors in /proc/self/fd and inotify instances"))
    func openingAndClosingManyWatchedStoresLeaksNothing() throws {
        let dir = try TemporaryDirectory()
        // Other tests open descriptors in parallel, so count only the ones a store could leak: into this
        // test's directory (store, lock and temporary files, the directory itself) and inotify instances.
        func descriptors() throws -> (files: Int, inotify: Int) {
            var files = 0
            var inotify = 0
            for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry)
                else { continue }  // closed between the listing and the read
                if target.hasPrefix(dir.path) { files += 1 }
                if target == "anon_inode:inotify" { inotify += 1 }
            }
            return (files, inotify)
        }
        // Warm up the shared watcher so its one descriptor is not counted as a leak.
        do {
            let (_, _, token) = try observed(dir.file("warm.json"))
            _ = token
        }
        let before = try descriptors()
        for index in 0..<200 {
            let (defaults, _, token) = try observed(dir.file("s\(index).json"))
            defaults[.count] = index
            try defaults.save()
            token.cancel()
        }
        let after = try descriptors()
        #expect(after.files == 0, "descriptors into the store's directory left open: \(after.files)")
        #expect(after.inotify <= before.inotify, "inotify instances before: \(before.inotify), after: \(after.inotify)")
    }
}
