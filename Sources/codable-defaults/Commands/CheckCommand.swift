import CodableDefaults
import Foundation

/// `check FILE`: whether FILE is a valid store file.
struct CheckCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "check",
        origin: .added(),
        abstract: "Check that FILE is a valid store file.",
        arguments: [.store],
        options: StoreLocation.options,
        discussion: [
            "Prints 'FILE: valid (N keys)' and exits with 0, or prints the error with its line and column and "
                + "exits with 4. A missing file is an error here (exit 4)."
        ],
        examples: [
            "codable-defaults check settings.json"
        ],
        exitCases: [.missingFile("a missing file for check")])

    /// The store to check.
    let location: StoreLocation

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        location = try StoreLocation(parsing: &arguments)
    }

    func run(in tool: Tool) throws(ToolError) {
        let defaults = try tool.open(location)
        let path = tool.path(of: defaults)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ToolError(.badFile, "\(path): no such file")
        }
        let count = try tool.storedMembers(defaults, includingReserved: false).count
        try Output.print("\(path): valid (\(count) \(count == 1 ? "key" : "keys"))\n")
    }
}
