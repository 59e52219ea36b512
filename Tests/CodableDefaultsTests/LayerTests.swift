import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Read-only layers around the store: the lookup order, the environment's mapping and text rule, files and
/// directories (strict, watched), secrets, and where each value comes from.
@Suite struct LayerTests {
    static let name = Defaults.Key<String>("name", default: "default")
    static let volume = Defaults.Key<Double>("volume", default: 0.5)
    static let tags = Defaults.Key<[String]>("tags", default: [])
    static let port = Defaults.Key<Int>("server.port", default: 80)

    /// A store on `dir`'s settings file with the given layers, not shared with other tests' stores. What it
    /// reports goes to `reported` (not to standard error: a passing `swift test` prints nothing).
    func open(
        _ dir: TemporaryDirectory, overrides: [Defaults.Layer] = [], fallbacks: [Defaults.Layer] = [],
        reported: Recorder<DefaultsError> = Recorder()
    ) throws -> Defaults {
        let defaults = try openFresh(dir.file())
        defaults.onError = { reported.append($0) }
        try defaults.setLayers(overrides: overrides, fallbacks: fallbacks)
        return defaults
    }

    @Test func theLookupOrderIsArgumentOverrideStoredFallbackRegisteredDefault() throws {
        let dir = try TemporaryDirectory()
        let key = Defaults.Key<Int>("n", default: 0)
        let defaults = try open(
            dir, overrides: [.values(["n": 2], label: "first"), .values(["n": 3], label: "second")],
            fallbacks: [.values(["n": 5], label: "fallback"), .values(["n": 6], label: "later fallback")])
        defaults.register(defaults: ["n": 7])
        _ = defaults.store.setArguments([MemberName("n"): Array("1".utf8)])
        defaults[key] = 4
        #expect(defaults[key] == 1)
        #expect(defaults.source(for: key) == .argument)
        _ = defaults.store.setArguments([:])
        #expect(defaults[key] == 2)
        #expect(defaults.source(for: key) == .values(label: "first"))
        try defaults.setLayers(fallbacks: [.values(["n": 5], label: "fallback")])
        #expect(defaults[key] == 4, "without overrides the stored value wins")
        #expect(defaults.source(for: key) == .stored(path: dir.file().path))
        defaults.removeObject(forKey: "n")
        #expect(defaults[key] == 5)
        #expect(defaults.source(for: key) == .values(label: "fallback"))
        try defaults.setLayers()
        #expect(defaults[key] == 7)
        #expect(defaults.source(for: key) == .registered)
        #expect(defaults.source(for: Defaults.Key<Int>("other", default: 0)) == .default)
    }

    @Test func environmentNamesMapKeysByTheDocumentedRule() {
        #expect(Defaults.Layer.environmentVariableName(for: "volume", prefix: "MYSERVICE_") == "MYSERVICE_VOLUME")
        #expect(
            Defaults.Layer.environmentVariableName(for: "server.port", prefix: "MYSERVICE_") == "MYSERVICE_SERVER_PORT")
        #expect(Defaults.Layer.environmentVariableName(for: "maxConn-2", prefix: "") == "MAXCONN_2")
        #expect(Defaults.Layer.environmentVariableName(for: "é", prefix: "P_") == "P__")
    }

    @Test func environmentTextIsJSONWhenItParsesElseAString() throws {
        let dir = try TemporaryDirectory()
        let variables = ["S_NAME": "Guest", "S_VOLUME": "0.9", "S_TAGS": #"["a","b"]"#, "S_SERVER_PORT": "8080"]
        let defaults = try open(
            dir,
            overrides: [
                .environment(variables, prefix: "S_")
            ])
        #expect(defaults[Self.name] == "Guest")
        #expect(defaults[Self.volume] == 0.9)
        #expect(defaults[Self.tags] == ["a", "b"])
        #expect(defaults[Self.port] == 8080)
        #expect(defaults.source(for: Self.port) == .environment(variable: "S_SERVER_PORT"))
        #expect(defaults.keys.isEmpty, "the environment lists no names, and nothing is stored")
    }

    @Test func aWrongTypedEnvironmentValueIsReportedNamingTheVariable() throws {
        let dir = try TemporaryDirectory()
        let defaults = try open(
            dir, overrides: [.environment(["S_VOLUME": "loud"], prefix: "S_")])
        let reported = Recorder<DefaultsError>()
        defaults.onError = { reported.append($0) }
        let error = #expect(throws: DefaultsError.self) { try defaults.value(for: Self.volume) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.key == "volume")
        #expect(error?.message.contains("environment variable S_VOLUME") == true, "\(String(describing: error))")
        #expect(defaults[Self.volume] == 0.5, "the subscript gives the default")
        #expect(reported.values.map(\.code) == [.decodingFailed], "and reports the error, once")
    }

    /// A layer's value that breaks a rule of its key reads as the default, and the error names the layer it came
    /// from (the variable, or the layer's file), not the store file.
    @Test func aLayersValueThatBreaksARuleIsReportedNamingTheLayer() throws {
        let bounded = Defaults.Key<Double>("volume", default: 0.5, constraints: [.range(0...1)])
        let dir = try TemporaryDirectory()
        let environment = try open(dir, overrides: [.environment(["S_VOLUME": "5"], prefix: "S_")])
        let error = #expect(throws: DefaultsError.self) { try environment.value(for: bounded) }
        #expect(error?.code == .invalidValue)
        #expect(error?.path == nil, "\(String(describing: error))")
        #expect(error?.message.contains("environment variable S_VOLUME, 5,") == true, "\(String(describing: error))")

        let other = try TemporaryDirectory()
        let etc = other.file("defaults.json")
        try write(#"{"volume": 7}"#, to: etc)
        let file = try open(other, fallbacks: [.file(etc)])
        let fromFile = #expect(throws: DefaultsError.self) { try file.value(for: bounded) }
        #expect(fromFile?.path == etc.path, "\(String(describing: fromFile))")
        #expect(fromFile?.message.contains("in the layer file") == true, "\(String(describing: fromFile))")
        #expect(file[bounded] == 0.5)
    }

    @Test func aSetOfAShadowedKeyWritesTheStoreAndReadsKeepTheOverride() throws {
        let dir = try TemporaryDirectory()
        let defaults = try open(dir, overrides: [.values(["volume": 0.1], label: "ops")])
        defaults[Self.volume] = 0.8
        try defaults.save()
        #expect(defaults[Self.volume] == 0.1)
        #expect(try openFresh(dir.file())[Self.volume] == 0.8)
        try defaults.setLayers()
        #expect(defaults[Self.volume] == 0.8)
    }

    @Test func aFallbackFileIsParsedStrictlyAndABadOneIsAnErrorWithItsPosition() throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("defaults.json")
        try write("{\n  \"volume\": 0.25,\n  \"volume\": 0.5\n}\n", to: etc)
        let defaults = try openFresh(dir.file())
        let error = #expect(throws: DefaultsError.self) { try defaults.setLayers(fallbacks: [.file(etc)]) }
        #expect(error?.code == .invalidJSON)
        #expect(error?.path == etc.path)
        #expect((error?.line, error?.column) == (3, 3))
        #expect(try text(etc) == "{\n  \"volume\": 0.25,\n  \"volume\": 0.5\n}\n", "never written")
        #expect(!FileManager.default.fileExists(atPath: etc.path + ".lock"), "never locked")
    }

    @Test func aMissingFallbackFileIsEmptyUntilItAppears() async throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("etc/defaults.json")
        let defaults = try open(dir, fallbacks: [.file(etc)])
        #expect(defaults[Self.volume] == 0.5)
        let seen = Recorder<Double>()
        let token = defaults.observe(Self.volume) { seen.append($0.newValue) }
        try FileManager.default.createDirectory(at: etc.deletingLastPathComponent(), withIntermediateDirectories: true)
        try write("{\"volume\": 0.75}", to: etc)
        #expect(try await eventually { seen.values.last == 0.75 })
        #expect(defaults.source(for: Self.volume) == .file(path: etc.path))
        token.cancel()
    }

    @Test func anEditOfAFallbackFileReachesObserversUpdatesAndPersisted() async throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("defaults.json")
        try write("{\"volume\": 0.25, \"name\": \"etc\"}", to: etc)
        let defaults = try open(dir, fallbacks: [.file(etc)])
        let persisted = Persisted(Self.volume, store: defaults)
        #expect(persisted.wrappedValue == 0.25)
        let seen = Recorder<Double>()
        let token = defaults.observe(Self.volume) { seen.append($0.newValue) }
        var updates = defaults.updates(for: Self.volume).makeAsyncIterator()
        #expect(await updates.next() == 0.25)
        try write("{\"volume\": 0.5, \"name\": \"etc\"}", to: etc)
        #expect(await updates.next() == 0.5)
        #expect(try await eventually { seen.values == [0.5] })
        #expect(persisted.wrappedValue == 0.5)
        // A bad edit keeps the last good values and is reported once.
        let reported = Recorder<DefaultsError>()
        defaults.onError = { reported.append($0) }
        try write("{\"volume\": oops}", to: etc)
        #expect(try await eventually { reported.values.count == 1 })
        #expect(reported.values.first?.path == etc.path)
        #expect(defaults[Self.volume] == 0.5)
        try write("{\"volume\": 0.125}", to: etc)
        #expect(await updates.next() == 0.125)
        #expect(defaults.string(forKey: "name") == nil, "a name the file no longer holds is gone")
        token.cancel()
    }

    @Test func aDirectoryHoldsOneFilePerKey() throws {
        let dir = try TemporaryDirectory()
        let secrets = dir.file("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        try write("Guest\n", to: secrets.appendingPathComponent("name"))
        try write("0.9", to: secrets.appendingPathComponent("volume"))
        try write("[\"a\",\"b\"]\n", to: secrets.appendingPathComponent("tags"))
        try write("two lines\n\n", to: secrets.appendingPathComponent("motto"))
        try write("1", to: secrets.appendingPathComponent(".hidden"))
        try FileManager.default.createDirectory(
            at: secrets.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let defaults = try open(dir, fallbacks: [.directory(secrets)])
        #expect(defaults[Self.name] == "Guest", "one trailing newline dropped")
        #expect(defaults[Self.volume] == 0.9)
        #expect(defaults[Self.tags] == ["a", "b"])
        #expect(defaults.string(forKey: "motto") == "two lines\n", "only one newline is dropped")
        #expect(defaults.object(forKey: ".hidden") == nil)
        #expect(defaults.object(forKey: "sub") == nil)
        #expect(defaults.source(for: Self.name) == .file(path: secrets.appendingPathComponent("name").path))
        #expect(Set(defaults.dictionaryRepresentation().keys) == ["motto", "name", "tags", "volume"])
    }

    @Test func aDirectoryFileThatIsNotUTF8IsAnErrorNamingIt() throws {
        let dir = try TemporaryDirectory()
        let secrets = dir.file("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        let file = secrets.appendingPathComponent("blob")
        try Data([0xFF, 0xFE]).write(to: file)
        let defaults = try openFresh(dir.file())
        let error = #expect(throws: DefaultsError.self) { try defaults.setLayers(fallbacks: [.directory(secrets)]) }
        #expect(error?.path == file.path)
        #expect(error?.key == "blob")
    }

    @Test func aNewFileInAWatchedDirectoryReachesObservers() async throws {
        let dir = try TemporaryDirectory()
        let secrets = dir.file("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        let defaults = try open(dir, fallbacks: [.directory(secrets)])
        let seen = Recorder<String>()
        let token = defaults.observe(Self.name) { seen.append($0.newValue) }
        try write("Ann\n", to: secrets.appendingPathComponent("name"))
        #expect(try await eventually { seen.values == ["Ann"] })
        try FileManager.default.removeItem(at: secrets.appendingPathComponent("name"))
        #expect(try await eventually { seen.values == ["Ann", "default"] })
        token.cancel()
    }

    @Test func aSecretValueNeverAppearsInAnError() throws {
        let dir = try TemporaryDirectory()
        let secret = "hunter2-sesame-42"
        let secrets = dir.file("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        try write("{\"token\": \"\(secret)\"}", to: secrets.appendingPathComponent("api"))
        try write("\(secret)\n", to: secrets.appendingPathComponent("count"))
        let reported = Recorder<DefaultsError>()
        let defaults = try open(
            dir, overrides: [.environment(["S_PIN": "\"\(secret)\""], prefix: "S_", secret: true)],
            fallbacks: [.directory(secrets, secret: true)], reported: reported)
        var texts: [String] = []
        for error in [
            loudError(defaults, Defaults.Key<Int>("api", default: 0)),
            loudError(defaults, Defaults.Key<Int>("count", default: 0)),
            loudError(defaults, Defaults.Key<[Int]>("pin", default: [])),
        ] {
            let error = try #require(error)
            texts += [error.description, error.message, "\(error)", String(reflecting: error)]
        }
        // A stored value of a key marked secret.
        defaults.set(secret, forKey: "stored")
        let storedError = try #require(loudError(defaults, Defaults.Key<Int>("stored", default: 0, secret: true)))
        texts += [storedError.description, String(reflecting: storedError)]
        // A secret file that does not parse.
        let bad = dir.file("bad.json")
        try write("{\"token\": \(secret)}", to: bad)
        let parseError = #expect(throws: DefaultsError.self) {
            try defaults.setLayers(fallbacks: [.file(bad, secret: true)])
        }
        texts += [parseError?.description ?? "", String(reflecting: parseError)]
        for layer in [
            Defaults.Layer.directory(secrets, secret: true), .environment(prefix: "S_", secret: true),
            .environment(["S_X": secret], prefix: "S_", names: ["x": "OTHER_X"], secret: true),
            .values(["k": .string(secret)], secret: true),
        ] {
            texts += [layer.description, String(reflecting: layer), dumped(layer)]
        }
        for listed in try defaults.layeredValues(forKey: "pin") + defaults.layeredValues(forKey: "count") {
            texts += [listed.description, String(reflecting: listed), dumped(listed)]
        }
        #expect(texts.count == 34)
        #expect(reported.values.count == 4, "each failed read was also reported")
        texts += reported.values.map(\.description)
        for text in texts { #expect(!text.contains(secret), "\(text)") }
        for text in texts { #expect(!text.contains("hunter2"), "\(text)") }
        #expect(defaults.string(forKey: "count") == secret, "the value itself is read as usual")
    }

    /// What `dump` prints of `value`.
    private func dumped(_ value: some Any) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }

    /// The error a loud read of `key` throws, or `nil` when it throws none.
    private func loudError<Value>(_ defaults: Defaults, _ key: Defaults.Key<Value>) -> DefaultsError? {
        do {
            _ = try defaults.value(for: key)
            return nil
        } catch {
            return error
        }
    }

    @Test func namesOfFileLayersAreListedByDictionaryRepresentationNotByKeys() throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("defaults.json")
        try write("{\"fromFile\": 1}", to: etc)
        let defaults = try open(dir, fallbacks: [.file(etc)])
        defaults.set(2, forKey: "stored")
        #expect(defaults.keys == ["stored"])
        #expect(Set(defaults.dictionaryRepresentation().keys) == ["fromFile", "stored"])
        #expect(defaults.store.hasEffectiveValue("fromFile"))
    }

    @Test func observeAllHearsOfAFallbackFileEditForNamesNeverUsed() async throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("defaults.json")
        try write("{\"a\": 1, \"b\": 2}", to: etc)
        let defaults = try open(dir, fallbacks: [.file(etc)])
        let told = Recorder<Set<String>>()
        let token = defaults.observeAll { told.append($0) }
        try write("{\"a\": 1, \"b\": 3, \"c\": 4}", to: etc)
        #expect(try await eventually { told.values.reduce(into: Set<String>()) { $0.formUnion($1) } == ["b", "c"] })
        #expect(defaults.integer(forKey: "c") == 4)
        token.cancel()
    }

    @Test func layeredValuesListEveryLayerThatHasTheKeyInLookupOrder() throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("defaults.json")
        try write("{\"volume\": 0.25}", to: etc)
        let defaults = try open(
            dir, overrides: [.environment(["S_VOLUME": "0.9"], prefix: "S_", secret: true)],
            fallbacks: [.values(["other": 1]), .file(etc)])
        defaults.register(defaults: ["volume": 0.5])
        defaults[Self.volume] = 0.75
        let listed = try defaults.layeredValues(forKey: "volume")
        #expect(
            listed.map(\.source) == [
                .environment(variable: "S_VOLUME"), .stored(path: dir.file().path), .file(path: etc.path), .registered,
            ])
        #expect(listed.map(\.value) == [0.9, 0.75, 0.25, 0.5])
        #expect(listed.map(\.isSecret) == [true, false, false, false])
        #expect(listed.map(\.isEffective) == [true, false, false, false])
        #expect(try defaults.layeredValues(forKey: "nothing").isEmpty)
        let secretKey = Defaults.Key<Double>("volume", default: 0, secret: true)
        #expect(try defaults.layeredValues(for: secretKey).map(\.isSecret) == [true, true, true, true])
    }

    @Test func layersSitAboveAnInMemoryStoreToo() throws {
        let defaults = Defaults.inMemory()
        try defaults.setLayers(overrides: [.values(["volume": 0.1])], fallbacks: [.values(["name": "fallback"])])
        defaults[Self.volume] = 0.8
        defaults[Self.name] = "stored"
        #expect(defaults[Self.volume] == 0.1)
        #expect(defaults[Self.name] == "stored")
        defaults.reset(Self.name)
        #expect(defaults[Self.name] == "fallback")
        #expect(defaults.source(for: Self.name) == .values(label: "values"))
    }

    @Test func aBatchReadsLayersInTheSameLookupOrder() throws {
        let dir = try TemporaryDirectory()
        let defaults = try open(
            dir, overrides: [.values(["volume": 0.1])], fallbacks: [.values(["name": "fallback"])])
        var seen: [String] = []
        defaults.batch { batch in
            batch[Self.volume] = 0.8
            batch[Self.name] = "stored"
            seen.append("\(batch[Self.volume]) \(batch[Self.name])")
            batch.reset(Self.name)
            seen.append(batch[Self.name])
        }
        #expect(seen == ["0.1 stored", "fallback"])
    }

    @Test func aFileLayerMountedTheKubernetesWayIsReadAgainWhenTheMountIsSwapped() async throws {
        // A config map mounted as a volume: `defaults.json -> ..data/defaults.json`, `..data -> ..v1`; an update
        // makes `..v2` and renames a new `..data` link over the old one.
        let dir = try TemporaryDirectory()
        let mount = dir.file("config")
        let files = FileManager.default
        try files.createDirectory(at: mount.appendingPathComponent("..v1"), withIntermediateDirectories: true)
        try write("{\"volume\": 0.25}", to: mount.appendingPathComponent("..v1/defaults.json"))
        try files.createSymbolicLink(atPath: mount.appendingPathComponent("..data").path, withDestinationPath: "..v1")
        try files.createSymbolicLink(
            atPath: mount.appendingPathComponent("defaults.json").path, withDestinationPath: "..data/defaults.json")
        let defaults = try open(dir, fallbacks: [.file(mount.appendingPathComponent("defaults.json"))])
        #expect(defaults[Self.volume] == 0.25)
        let seen = Recorder<Double>()
        let token = defaults.observe(Self.volume) { seen.append($0.newValue) }
        try files.createDirectory(at: mount.appendingPathComponent("..v2"), withIntermediateDirectories: true)
        try write("{\"volume\": 0.75}", to: mount.appendingPathComponent("..v2/defaults.json"))
        try files.createSymbolicLink(
            atPath: mount.appendingPathComponent("..data_tmp").path, withDestinationPath: "..v2")
        #expect(
            rename(mount.appendingPathComponent("..data_tmp").path, mount.appendingPathComponent("..data").path) == 0)
        #expect(try await eventually { seen.values == [0.75] })
        token.cancel()
    }

    @Test func aFileLayerThatLinksIntoAnotherDirectorySeesEditsOfItsTarget() async throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("opt/real.json")
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir.file("etc"), withIntermediateDirectories: true)
        try write("{\"volume\": 0.25}", to: target)
        let link = dir.file("etc/defaults.json")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        let defaults = try open(dir, fallbacks: [.file(link)])
        let seen = Recorder<Double>()
        let token = defaults.observe(Self.volume) { seen.append($0.newValue) }
        try write("{\"volume\": 0.5}", to: target)
        #expect(try await eventually { seen.values == [0.5] })
        token.cancel()
    }

    @Test func modifyStartsFromTheFallbackWhenNothingIsStored() throws {
        let dir = try TemporaryDirectory()
        let defaults = try open(dir, fallbacks: [.values(["volume": 0.25])])
        var seen: Double?
        try defaults.modify(Self.volume) { value in
            seen = value
            value += 0.125
        }
        #expect(seen == 0.25)
        #expect(defaults[Self.volume] == 0.375)
        #expect(defaults.source(for: Self.volume) == .stored(path: dir.file().path))
    }

    /// A value type whose decoder's error quotes the value it could not take.
    enum Mode: String, Codable, Sendable { case fast, slow }

    @Test func aSecretKeysValueStaysOutOfErrorsBeforeItIsSavedAndInModify() throws {
        let dir = try TemporaryDirectory()
        let secret = "hunter2-unsaved"
        let reported = Recorder<DefaultsError>()
        let defaults = try open(dir, reported: reported)
        defaults.set(secret, forKey: "mode")
        // Before any key declares the name secret, a read shows the decoder's words, value and all: the test can see
        // it.
        let plain = Defaults.Key<Mode>("mode", default: .fast)
        #expect(try #require(loudError(defaults, plain)).description.contains(secret))
        let secretKey = Defaults.Key<Mode>("mode", default: .fast, secret: true)
        let unsaved = try #require(loudError(defaults, secretKey))
        #expect(!unsaved.description.contains(secret), "\(unsaved)")
        // Once a key declared it secret, the name is secret for every read: the first error is not served again.
        let again = try #require(loudError(defaults, plain))
        #expect(!again.description.contains(secret), "\(again)")
        try defaults.save()
        let error = #expect(throws: DefaultsError.self) { try defaults.modify(secretKey) { $0 = .slow } }
        #expect(error?.code == .decodingFailed)
        #expect(error.map { !$0.description.contains(secret) } == true, "\(String(describing: error))")
        // What was reported: the secret key's failure without the value, the other key's with it.
        #expect(reported.values.filter { $0.description.contains(secret) }.count == 1)
    }

    @Test func anEmptyFileInADirectoryIsNoValueAndTheReservedNameIsNotALayers() throws {
        let dir = try TemporaryDirectory()
        let secrets = dir.file("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        try write("", to: secrets.appendingPathComponent("name"))
        try write("7", to: secrets.appendingPathComponent(Defaults.schemaVersionKey))
        let etc = dir.file("defaults.json")
        try write("{\"$schemaVersion\": 99, \"volume\": 0.25}", to: etc)
        let defaults = try open(dir, fallbacks: [.directory(secrets), .file(etc)])
        #expect(defaults[Self.name] == "default")
        #expect(defaults.object(forKey: Defaults.schemaVersionKey) == nil)
        #expect(try defaults.layeredValues(forKey: Defaults.schemaVersionKey).isEmpty)
        #expect(defaults[Self.volume] == 0.25)
    }

    @Test func aFallbackChangeUnderAStoredValueTellsNobody() async throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("defaults.json")
        try write("{\"volume\": 0.25, \"name\": \"a\"}", to: etc)
        let defaults = try open(dir, fallbacks: [.file(etc)])
        defaults[Self.volume] = 0.9
        let told = Recorder<Set<String>>()
        let token = defaults.observeAll { told.append($0) }
        try write("{\"volume\": 0.125, \"name\": \"b\"}", to: etc)
        #expect(try await eventually { !told.values.isEmpty })
        #expect(told.values == [["name"]], "volume's stored value hides its fallback")
        #expect(defaults[Self.volume] == 0.9)
        token.cancel()
    }

    @Test func aLayerErrorSpeaksOfTheLayersFileNotTheStores() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let error = #expect(throws: DefaultsError.self) { try defaults.setLayers(fallbacks: [.file(dir.url)]) }
        #expect(error?.code == .notARegularFile)
        #expect(error?.message.contains("layer's path") == true, "\(String(describing: error))")
    }

    @Test func observationTrackingIsToldOfALayerEdit() throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("defaults.json")
        try write("{\"volume\": 0.25}", to: etc)
        let defaults = try open(dir, fallbacks: [.file(etc)])
        let signal = tracking { defaults[Self.volume] }
        try write("{\"volume\": 0.5}", to: etc)
        #expect(signal.wait())
        #expect(defaults[Self.volume] == 0.5)
    }

    @Test func namesGiveAKeyAVariableOfItsOwn() throws {
        let dir = try TemporaryDirectory()
        let variables = ["S_VOLUME": "0.1", "LOUDNESS": "0.9", "S_NAME": "Ann"]
        let defaults = try open(
            dir, overrides: [.environment(variables, prefix: "S_", names: ["volume": "LOUDNESS", "tags": "S_NAME"])])
        #expect(defaults[Self.volume] == 0.9)
        #expect(defaults.source(for: Self.volume) == .environment(variable: "LOUDNESS"))
        #expect(defaults[Self.name] == "Ann")
        #expect(defaults.object(forKey: "tags") == "Ann")
    }

    @Test func aSecretKeysChangeDescribesNoValue() throws {
        let dir = try TemporaryDirectory()
        let secret = "hunter2-observed"
        let defaults = try open(dir)
        let key = Defaults.Key<String>("token", default: "", secret: true)
        let seen = Recorder<String>()
        let token = defaults.observe(key) { change in
            var dumped = ""
            dump(change, to: &dumped)
            seen.append("\(change) \(String(reflecting: change)) \(dumped)")
        }
        defaults[key] = secret
        #expect(seen.values.count == 1)
        #expect(seen.values.allSatisfy { !$0.contains(secret) && $0.contains("<secret>") }, "\(seen.values)")
        let open = Defaults.Key<String>("name", default: "")
        let shown = Recorder<String>()
        let other = defaults.observe(open) { shown.append("\($0)") }
        defaults[open] = "visible"
        #expect(shown.values == ["name:  -> visible"])
        token.cancel()
        other.cancel()
    }

    /// A store on `dir` with two fallbacks: a directory whose file `name` holds `etc`, and a file holding
    /// `{"volume": 0.25}`; with those two files.
    private func openWithTwoLayerFiles(_ dir: TemporaryDirectory) throws -> (Defaults, files: [URL]) {
        let secrets = dir.file("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        let nameFile = secrets.appendingPathComponent("name")
        try write("etc", to: nameFile)
        let etc = dir.file("defaults.json")
        try write("{\"volume\": 0.25}", to: etc)
        return (try open(dir, fallbacks: [.directory(secrets), .file(etc)]), [nameFile, etc])
    }

    /// Reads both layers of ``openWithTwoLayerFiles(_:)`` again now, as their watchers do on an event.
    private func rereadBothLayers(_ defaults: Defaults) {
        let generation = defaults.store.state.withLock { $0.layers.stack.generation }
        defaults.store.rereadLayer(0, generation: generation)
        defaults.store.rereadLayer(1, generation: generation)
    }

    /// `echo 9091 > file` truncates the file, then writes it: a layer read in between (something else in the
    /// directory changed, the watcher fired) keeps what the file supplied until it is whole again, so reads
    /// and observers never see the key's default for that moment.
    @Test func aLayerFileRewrittenInPlaceKeepsItsValuesWhileItIsEmpty() async throws {
        let dir = try TemporaryDirectory()
        let (defaults, files) = try openWithTwoLayerFiles(dir)
        let volumes = Recorder<Double>()
        let names = Recorder<String>()
        let tokens = [
            defaults.observe(Self.volume) { volumes.append($0.newValue) },
            defaults.observe(Self.name) { names.append($0.newValue) },
        ]

        // Both files emptied in place (truncated, as a shell's `>` does), and both layers read meanwhile.
        for file in files { #expect(truncate(file.path, 0) == 0) }
        rereadBothLayers(defaults)
        #expect(defaults[Self.volume] == 0.25)
        #expect(defaults[Self.name] == "etc")

        // Whole again, with new values.
        try Data("etc2\n".utf8).write(to: files[0])
        try Data("{\"volume\": 0.75}".utf8).write(to: files[1])
        rereadBothLayers(defaults)
        #expect(try await eventually { volumes.values.last == 0.75 && names.values.last == "etc2" })
        #expect(!volumes.values.contains(Self.volume.defaultValue), "\(volumes.values)")
        #expect(!names.values.contains(Self.name.defaultValue), "\(names.values)")
        for token in tokens { token.cancel() }
    }

    /// An empty file put in the place of a layer's file (an atomic swap: a new file, renamed over the old one,
    /// as editors and Kubernetes volumes do) is empty on purpose: the value it replaced is gone.
    @Test func anEmptyFileSwappedInForALayersFileSuppliesNothing() throws {
        let dir = try TemporaryDirectory()
        let (defaults, files) = try openWithTwoLayerFiles(dir)
        #expect(defaults[Self.name] == "etc")
        for file in files {
            let swapped = dir.file("swapped")
            #expect(FileManager.default.createFile(atPath: swapped.path, contents: Data()))
            #expect(rename(swapped.path, file.path) == 0)
        }
        rereadBothLayers(defaults)
        #expect(defaults[Self.name] == Self.name.defaultValue)
        #expect(defaults[Self.volume] == Self.volume.defaultValue)
    }
}
