import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Where another app's standard store is looked for: the sandbox container rule of macOS, run here on real
/// directories.
@Suite struct StandardDirectoryTests {
    @Test func aSandboxedAppsDirectoryIsInItsContainerWhenTheContainerExists() throws {
        let home = try TemporaryDirectory()
        let identifier = "com.example.Notes"
        #expect(
            Defaults.sandboxContainerDirectory(
                home: home.url.path, applicationIdentifier: identifier, isDirectory: Defaults.isDirectory) == nil)
        let container = home.url.appendingPathComponent("Library/Containers/\(identifier)")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        let directory = Defaults.sandboxContainerDirectory(
            home: home.url.path + "/", applicationIdentifier: identifier, isDirectory: Defaults.isDirectory)
        #expect(
            directory?.path
                == container.path + "/Data/Library/Application Support/\(identifier)")
    }

    @Test func aFileWhereTheContainerWouldBeIsNotAContainer() throws {
        let home = try TemporaryDirectory()
        let containers = home.url.appendingPathComponent("Library/Containers")
        try FileManager.default.createDirectory(at: containers, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: containers.appendingPathComponent("app"))
        #expect(
            Defaults.sandboxContainerDirectory(
                home: home.url.path, applicationIdentifier: "app", isDirectory: Defaults.isDirectory) == nil)
    }
}
