import Foundation

/// Paths given on the command line, made absolute as the kernel resolves them (the library's own `KernelPath`
/// does the same for a store's URL).
enum ArgumentPath {
    /// `path` made absolute against the current directory, with its `.` and `..` components kept: removing
    /// them as text (as `URL` does) names another file when a component before `..` is a symbolic link.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        let directory = FileManager.default.currentDirectoryPath
        return (directory.hasSuffix("/") ? directory : directory + "/") + path
    }

    /// The directory part of an absolute path: everything before its last `/` (`/` for a file at the root).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return path[..<slash].isEmpty ? "/" : String(path[..<slash])
    }
}
