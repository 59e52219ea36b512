import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Keys that say what they take: a set of a value that breaks a rule is refused, and a value another writer
/// stored that breaks it reads as the default, reported once and never written over.
@Suite struct ConstraintTests {
    private let volume = Defaults.Key<Double>("volume", default: 0.5, constraints: [.range(0...1)])
    private let retries = Defaults.Key<Int>("retries", default: 3, constraints: [.atLeast(0), .atMost(10)])
    private let nickname = Defaults.Key<String?>("nickname", constraints: [.some(.length(1...8))])
    private let tags = Defaults.Key<[String]>("tags", default: [], constraints: [.length(0...2)])
    private let theme = Defaults.Key<String>("theme", default: "light", constraints: [.oneOf(["light", "dark"])])
    private let even = Defaults.Key<Int>("even", default: 0, constraints: [.custom("an even number") { $0 % 2 == 0 }])
    private let pin = Defaults.Key<String?>("pin", constraints: [.some(.length(4...4))], secret: true)

    @Test func eachRuleRefusesASetNamingTheKeyAndTheRuleAndStoresNothing() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        let cases: [(String, String, () throws -> Void)] = [
            ("volume", "between 0.0 and 1.0", { try defaults.set(1.5, for: volume) }),
            ("retries", "at least 0", { try defaults.set(-1, for: retries) }),
            ("retries", "at most 10", { try defaults.set(11, for: retries) }),
            ("nickname", "from 1 to 8 characters long", { try defaults.set("Bartholomew", for: nickname) }),
            ("tags", "from 0 to 2 elements", { try defaults.set(["a", "b", "c"], for: tags) }),
            ("theme", #"one of "light", "dark""#, { try defaults.set("blue", for: theme) }),
            ("even", "an even number", { try defaults.set(3, for: even) }),
        ]
        for (key, rule, set) in cases {
            let error = #expect(throws: DefaultsError.self) { try set() }
            #expect(error?.code == .invalidValue)
            #expect(error?.key == key)
            #expect(error?.message.contains("it must be \(rule)") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("nothing was stored") == true)
            #expect(!defaults.hasStoredValue(forKey: key))
        }
        // Values that follow the rules are stored; nil always follows `.some`.
        try defaults.set(1, for: volume)
        try defaults.set("Ana", for: nickname)
        try defaults.set(nil, for: nickname)
        try defaults.set("dark", for: theme)
        #expect(defaults[volume] == 1 && defaults[theme] == "dark" && defaults[nickname] == nil)
        try defaults.save()
        #expect(try text(directory.file()) == "{\n  \"theme\": \"dark\",\n  \"volume\": 1\n}\n")
    }

    @Test func theSubscriptABatchAndModifyRefuseToo() throws {
        let defaults = try openFresh(try TemporaryDirectory().file())
        let errors = ErrorLog()
        defaults.onError = errors.handler
        defaults[volume] = 0.7
        defaults[volume] = 7
        #expect(defaults[volume] == 0.7)
        #expect(errors.errors.map(\.code) == [.invalidValue])

        defaults.batch { batch in
            batch[volume] = 0.2
            batch[theme] = "neon"
            #expect(batch[theme] == "light", "the refused set is not in the batch")
        }
        #expect(defaults[volume] == 0.2 && defaults[theme] == "light")
        #expect(errors.errors.map(\.code) == [.invalidValue, .invalidValue])

        let error = #expect(throws: DefaultsError.self) { try defaults.modify(retries) { $0 += 100 } }
        #expect(error?.code == .invalidValue && error?.key == "retries")
        #expect(defaults[retries] == 3 && !defaults.hasStoredValue(forKey: "retries"))
    }

    @Test func aBadValueAnotherWriterStoredReadsAsTheDefaultIsReportedOnceAndIsKept() throws {
        let directory = try TemporaryDirectory()
        try write(#"{"theme": "neon", "volume": 4}"#, to: directory.file())
        let defaults = try openFresh(directory.file())
        let errors = ErrorLog()
        defaults.onError = errors.handler
        #expect(defaults[volume] == 0.5)
        #expect(defaults[volume] == 0.5)
        #expect(defaults[theme] == "light")
        #expect(errors.errors.map(\.key) == ["volume", "theme"], "each reported once")
        #expect(
            errors.errors.first?.message.contains("the value 4 is not allowed: it must be between 0.0 and 1.0") == true)
        let loud = #expect(throws: DefaultsError.self) { try defaults.value(for: volume) }
        #expect(loud?.code == .invalidValue)
        // Never written over by a save of another key.
        defaults[retries] = 4
        try defaults.save()
        let kept = try JSONSerialization.jsonObject(with: Data(try bytes(directory.file()))) as? [String: Any]
        #expect(kept?["volume"] as? Int == 4 && kept?["theme"] as? String == "neon")
    }

    @Test func layersAndTheArgumentDomainAreCheckedTheSameWay() throws {
        let directory = try TemporaryDirectory()
        let errors = ErrorLog()
        let defaults = try Defaults(
            url: directory.file(), saveMode: .manual, arguments: ["program", "-retries", "99"],
            overrides: [.values(["volume": 3], label: "ops")], onError: errors.handler)
        #expect(defaults[volume] == 0.5)
        #expect(defaults[retries] == 3)
        #expect(Set(errors.errors.compactMap(\.key)) == ["volume", "retries"])
    }

    @Test func aSecretKeysErrorShowsNoPartOfTheValue() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        let error = #expect(throws: DefaultsError.self) { try defaults.set("hunter2", for: pin) }
        #expect(error?.code == .invalidValue)
        #expect(!"\(error.map { "\($0)" } ?? "")".contains("hunter2"))
        try write(#"{"pin": "hunter2"}"#, to: directory.file())
        let reopened = try openFresh(directory.file())
        let errors = ErrorLog()
        reopened.onError = errors.handler
        #expect(reopened[pin] == nil)
        #expect(errors.errors.count == 1 && !"\(errors.errors)".contains("hunter2"))
    }
}
