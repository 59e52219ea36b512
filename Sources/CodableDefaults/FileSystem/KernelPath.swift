#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The path of a file URL as the kernel will resolve it.
///
/// `URL` removes `.` and `..` components as text: `URL(fileURLWithPath: "link/../s.json").path` is
/// `<cwd>/s.json`, and `standardizedFileURL` does the same to any URL. When `link` is a symbolic link to
/// `real/sub`, the kernel (and `cat`) open `real/s.json` instead: a `..` goes up from where the link led, not
/// from the link's name. So the store's path is built from the URL's own spelling (its relative path and its
/// base), keeping every component for the kernel and `realpath` to resolve.
enum KernelPath {
    /// The absolute path the file URL `url` spells, with its `.` and `..` components kept; relative to
    /// `currentDirectory` when the URL has no absolute base.
    static func of(_ url: URL, currentDirectory: String) -> String {
        let relative = url.relativePath
        if relative.hasPrefix("/") { return relative }
        let base: String
        if let baseURL = url.baseURL {
            let basePath = of(baseURL, currentDirectory: currentDirectory)
            // A base that is not a directory (no trailing slash) is resolved against as RFC 3986 does: from
            // the directory that holds it.
            base = baseURL.hasDirectoryPath ? basePath : parent(of: basePath)
        } else {
            base = currentDirectory
        }
        if relative.isEmpty { return base }
        return (base.hasSuffix("/") ? base : base + "/") + relative
    }

    /// `path` without its last component (`/` for a component at the root).
    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }
}
