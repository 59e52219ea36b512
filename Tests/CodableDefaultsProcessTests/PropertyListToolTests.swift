import CodableDefaults
import CodableDefaultsTestSupport
import Foundation
import Testing

/// `import` and `export` with property lists, as `defaults(1)` writes and reads them; the lists made and read back
/// by python's `plistlib`, an implementation independent of the tool's.
@Suite(.enabled(if: findExecutable("python3") != nil, "needs python3, whose plistlib makes and reads the lists"))
struct PropertyListToolTests {
    /// Runs python3 with `script` (its standard output the result), from the sandbox's work directory.
    private func python(_ script: String, in sandbox: ToolSandbox) throws -> String {
        let path = sandbox.work.appendingPathComponent("script.py")
        try Data(("import os, sys\nos.chdir(sys.argv[1])\n" + script).utf8).write(to: path)
        let (status, output) = try runCommandBlocking(["python3", path.path, sandbox.work.path])
        try #require(status == .exited(0), "python3: \(output)")
        return output.joined(separator: "\n")
    }

    /// The values every list holds: each property-list type, nested.
    private static let values = """
        import datetime, plistlib, sys
        values = {"volume": 0.8, "count": 5, "enabled": True, "name": "Ann",
                  "when": datetime.datetime(2026, 12, 1, 10, 0, 0), "blob": b"\\x00\\x01\\xff",
                  "recent": ["a.txt", ["nested", 2]], "window": {"width": 800, "ratio": 1.5, "tags": {"x": False}}}
        """

    @Test func importTakesXMLAndBinaryListsAndTypedKeysReadTheirValues() async throws {
        for format in ["FMT_XML", "FMT_BINARY"] {
            let sandbox = try ToolSandbox()
            _ = try python(
                Self.values + "\nopen('prefs.plist', 'wb').write(plistlib.dumps(values, fmt=plistlib.\(format)))\n",
                in: sandbox)
            try await sandbox.expectSuccess(["import", "s.json", "prefs.plist"])

            let defaults = try Defaults(url: sandbox.work.appendingPathComponent("s.json"), saveMode: .manual)
            #expect(defaults.value(Double.self, forKey: "volume") == 0.8)
            #expect(defaults.value(Int.self, forKey: "count") == 5)
            #expect(defaults.value(Bool.self, forKey: "enabled") == true)
            #expect(defaults.value(String.self, forKey: "name") == "Ann")
            let when = try #require(defaults.value(Date.self, forKey: "when"))
            #expect(when == ISO8601DateFormatter().date(from: "2026-12-01T10:00:00Z"))
            #expect(defaults.value(Data.self, forKey: "blob") == Data([0, 1, 0xFF]))
            #expect(
                defaults.object(forKey: "recent")
                    == .array([.string("a.txt"), .array([.string("nested"), .number(2)])]))
            #expect(
                defaults.object(forKey: "window")
                    == .object([
                        "width": .number(800), "ratio": .number(1.5), "tags": .object(["x": .bool(false)]),
                    ]), "\(format)")
        }
    }

    @Test func exportToAPlistFileWritesWhatPlistlibReadsBack() async throws {
        let sandbox = try ToolSandbox()
        try Data(
            #"{"count":5,"enabled":true,"name":"Ann","recent":["a",["b",2]],"volume":0.8,"window":{"w":800,"r":1.5}}"#
                .utf8
        ).write(to: sandbox.work.appendingPathComponent("s.json"))
        try await sandbox.expectSuccess(["export", "s.json", "out.plist"])
        let read = try python(
            "import plistlib, json\nprint(json.dumps(plistlib.load(open('out.plist', 'rb')), sort_keys=True))\n",
            in: sandbox)
        #expect(
            read
                == #"{"count": 5, "enabled": true, "name": "Ann", "recent": ["a", ["b", 2]], "volume": 0.8, "#
                + #""window": {"r": 1.5, "w": 800}}"#)
        // The integers are integers and the reals reals, as defaults(1) would have them.
        let types = try python(
            "import plistlib\nv = plistlib.load(open('out.plist', 'rb'))\n"
                + "print(type(v['count']).__name__, type(v['volume']).__name__, type(v['enabled']).__name__)\n",
            in: sandbox)
        #expect(types == "int float bool")

        // null has no property-list form: refused, naming the key, and nothing is written.
        try await sandbox.expectSuccess(["write", "s.json", "nothing", "null"])
        let refused = try await sandbox.run(["export", "s.json", "other.plist"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\"nothing\"") && refused.stderr.contains("null"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.work.appendingPathComponent("other.plist").path))
    }

    @Test func aBrokenListIsRefusedNamingItAndTheStoreStaysByteForByte() async throws {
        let sandbox = try ToolSandbox()
        let store = sandbox.work.appendingPathComponent("s.json")
        try await sandbox.expectSuccess(["write", "s.json", "volume", "0.5"])
        let before = try Data(contentsOf: store)
        let broken: [(String, String)] = [
            ("truncated.plist", #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>a</key>"#),
            ("array.plist", #"<?xml version="1.0"?><plist version="1.0"><array><integer>1</integer></array></plist>"#),
            ("binary.plist", "bplist00 not really"),
        ]
        for (name, text) in broken {
            try Data(text.utf8).write(to: sandbox.work.appendingPathComponent(name))
            let result = try await sandbox.run(["import", "s.json", name])
            #expect(result.status == 4, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("\(name): not a property list"), "\(name): \(result.stderr)")
            #expect(try Data(contentsOf: store) == before, "\(name)")
        }
    }
}
