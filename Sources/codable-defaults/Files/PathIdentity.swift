import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which file a path names, as the kernel resolves it: compared to tell whether two paths are one file
/// however they are spelled (through symbolic links to the file or to a directory on the way, `..`, hard
/// links).
enum PathIdentity: Equatable {
    /// An existing file: its device and inode (links followed).
    case file(device: UInt64, inode: UInt64)
    /// A file that does not exist yet: the device and inode of the directory that will hold it, and its name.
    case entry(device: UInt64, inode: UInt64, name: String)
    /// Neither the file nor its directory can be inspected: the path as given.
    case unknown(String)

    /// The identity of what `path` names (an absolute path; a final dangling link is followed by the caller).
    init(path: String) {
        var info = stat()
        if stat(path, &info) == 0 {
            self = .file(device: Self.number(info.st_dev), inode: Self.number(info.st_ino))
            return
        }
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let directory = path[..<slash].isEmpty ? "/" : String(path[..<slash])
        let name = String(path[path.index(after: slash)...])
        if stat(directory, &info) == 0 {
            self = .entry(device: Self.number(info.st_dev), inode: Self.number(info.st_ino), name: name)
        } else {
            self = .unknown(path)
        }
    }

    /// A device or inode number as 64 bits, the library's conversion (`FileIdentity`): Darwin's `dev_t` is a
    /// signed `Int32` and may be negative, which `UInt64(_:)` would trap on; its bits are what identify it.
    static func number<Number: BinaryInteger>(_ value: Number) -> UInt64 {
        UInt64(truncatingIfNeeded: value)
    }
}
