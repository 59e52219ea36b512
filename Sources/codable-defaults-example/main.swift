// A runnable tour of CodableDefaults: opens (or creates) a store file, changes a few settings, and prints
// the file. Run it twice to see the values persist: `swift run codable-defaults-example /tmp/demo.json`.
import CodableDefaults
import Foundation

struct Profile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

extension Defaults.Keys {
    static let volume = Defaults.Key<Double>("volume", default: 0.5)
    static let profile = Defaults.Key<Profile>("profile", default: Profile(name: "Guest", age: 0))
    static let launches = Defaults.Key<Int>("launches", default: 0)
    static let token = Defaults.Key<String?>("token")
}

let arguments = CommandLine.arguments.dropFirst()
let path = arguments.first ?? FileManager.default.temporaryDirectory.appendingPathComponent("demo.json").path
do {
    let defaults = try Defaults(url: URL(fileURLWithPath: path))
    defaults[.launches] += 1
    defaults[.profile].age += 1
    defaults[.volume] = defaults[.launches].isMultiple(of: 2) ? 0.8 : 0.3
    defaults[.token] = defaults[.token] == nil ? "abc123" : nil
    try defaults.save()
    print("launch \(defaults[.launches]): volume \(defaults[.volume]), profile \(defaults[.profile])")
    print("stored keys: \(defaults.keys.joined(separator: ", "))")
    print("--- \(path)")
    print(try String(contentsOfFile: path, encoding: .utf8), terminator: "")
} catch {
    print("error: \(error)")
    exit(1)
}
