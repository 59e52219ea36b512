import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The README's examples, run: what their comments promise (the values read, the file written). That each
/// block compiles as copied is checked from the README's own text by `Scripts/check-snippets.sh`; the keys
/// are declared in TestSupport.swift as in the README.
@Suite struct QuickStartTests {
    @Test func quickStart() throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("myapp/settings.json")
        do {
            let defaults = try Defaults(url: url)
            defaults[.volume] = 0.8
            defaults[.profile].age += 1
            defaults[.token] = nil
            defaults.reset(.volume)
            let p = try defaults.value(for: .profile)
            try defaults.save()
            #expect(p == Profile(name: "Guest", age: 1))

            let manual = try Defaults(url: url, saveMode: .manual)
            let scratch = Defaults.inMemory()
            #expect(manual[.profile].age == 1)
            #expect(scratch[.profile].age == 0)
        }
        #expect(try text(url) == "{\n  \"profile\": {\"age\":1,\"name\":\"Guest\"}\n}\n")
    }

    @Test func observingChanges() async throws {
        let defaults = Defaults.inMemory()
        let seen = Recorder<Double>()
        let token = defaults.observe(.volume) { change in seen.append(change.newValue) }
        let all = defaults.observeAll { keys in _ = keys }
        defaults.batch {
            $0[.volume] = 0.2
            $0[.profile].name = "B"
        }
        var updates = defaults.updates(for: .volume).makeAsyncIterator()
        #expect(await updates.next() == 0.2)
        #expect(seen.values == [0.2])
        _ = (token, all)
    }

    @Test func comingFromUserDefaults() throws {
        let defaults = Defaults.inMemory()
        defaults.register(defaults: ["count": 7, "name": "Guest"])
        #expect(defaults.integer(forKey: "count") == 7)
        defaults.set(42, forKey: "count")
        defaults.removeValue(forKey: "count")
        #expect(defaults.integer(forKey: "count") == 7)
        #expect(defaults.object(forKey: "profile") == nil)
        #expect(throws: Never.self) { _ = try Defaults.suiteURL(named: "com.example.shared") }
    }
}
