#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How a directory compares the names of its entries.
enum NameComparison: Equatable, Sendable {
    /// Names that differ only in case are different entries (the usual Linux file system, case-sensitive
    /// APFS).
    case caseSensitive
    /// Names that differ only in case are one entry (APFS and HFS+ by default on macOS and on iOS and the
    /// other Apple platforms; a Linux `casefold` directory, `chattr +F`).
    case caseInsensitive
    /// The directory does not exist (yet): it will compare names as the nearest existing directory above
    /// it does, since that is what a directory created in it inherits (the volume's setting on Apple file
    /// systems, the `+F` flag on Linux).
    case missing
}

extension DurableFile {
    /// The key under which ``StoreRegistry`` keeps the store of the file at `path` (a path from
    /// ``canonicalPath(_:system:)``): the path itself, with each component that lies in a case-insensitive
    /// directory case-folded, so every spelling of one file gives one key, whether the file exists yet or
    /// not (`Settings.json` and `settings.json` in a case-insensitive directory are one store).
    ///
    /// The rule: the root and each directory on the path is asked how it compares names
    /// (`comparison(directory)`, one call per directory; ``Platform/nameComparison(ofDirectory:)`` in
    /// production). A directory that does not exist yet compares as its parent does. A component inside a
    /// case-insensitive directory is folded (see ``foldedName(_:)``); one inside a case-sensitive directory
    /// is kept as its bytes. Nothing depends on whether the file itself exists, so the key of a file is the
    /// same before its first save and after.
    ///
    /// On a case-sensitive file system this is `path` unchanged.
    static func registryKey(forCanonicalPath path: String, comparison: (String) -> NameComparison) -> String {
        guard path.hasPrefix("/") else { return path }
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var directory = "/"
        var insensitive = comparison("/") == .caseInsensitive
        var key = ""
        for (index, component) in components.enumerated() {
            key += "/" + (insensitive ? foldedName(component) : component)
            guard index < components.count - 1 else { break }
            directory += (directory == "/" ? "" : "/") + component
            switch comparison(directory) {
            case .caseSensitive: insensitive = false
            case .caseInsensitive: insensitive = true
            case .missing: break  // inherits its parent's
            }
        }
        return key.isEmpty ? "/" : key
    }

    /// A name in the form the key compares: lowercased (Unicode's full lowercase mapping).
    ///
    /// The file systems fold more than this (full case folding: `ß` and `ss` are one name on APFS and in a
    /// Linux `casefold` directory, and both also ignore Unicode normalization), so two spellings that only
    /// those rules join get two stores in this process. That is safe: two stores on one file coordinate as
    /// two processes do (the lock file, the re-read before each write, the watcher). Folding more than the
    /// file system would be the harm: two files written through one store.
    static func foldedName(_ name: String) -> String {
        name.lowercased()
    }

    /// ``registryKey(forCanonicalPath:comparison:)`` with the system's answers.
    static func registryKey(forCanonicalPath path: String) -> String {
        registryKey(forCanonicalPath: path, comparison: Platform.nameComparison(ofDirectory:))
    }
}

extension Platform {
    /// How the directory at `path` compares names, as the system says.
    ///
    /// - Darwin: `pathconf(path, _PC_CASE_SENSITIVE)`: 1 is case-sensitive, 0 case-insensitive. -1 with
    ///   `ENOENT` or `ENOTDIR` is a directory that does not exist; any other failure (a file system that
    ///   does not support the selector gives `EINVAL`) counts as case-sensitive, which is xnu's own rule
    ///   (`bsd/vfs/vfs_syscalls.c`, rename: "Assume that the target file system is case sensitive if
    ///   _PC_CASE_SENSITIVE selector isn't supported").
    /// - Linux (glibc): the directory's `FS_CASEFOLD_FL` inode flag (`chattr +F`, shown by `lsattr` as `F`),
    ///   read with the `FS_IOC_GETFLAGS` ioctl. A directory that cannot be opened for reading (no read
    ///   permission) or a file system without the ioctl counts as case-sensitive.
    /// - Elsewhere (musl, architectures whose ioctl numbers are encoded differently): case-sensitive.
    static func nameComparison(ofDirectory path: String) -> NameComparison {
        #if canImport(Darwin)
            // Not compiled here (no Apple SDK on the Linux builder): `pathconf(_:_:)` returns a C `long`,
            // `_PC_CASE_SENSITIVE` is 11 in xnu's <unistd.h>.
            let answer = pathconf(path, _PC_CASE_SENSITIVE)
            if answer == 0 { return .caseInsensitive }
            if answer > 0 { return .caseSensitive }
            let code = errno
            return code == ENOENT || code == ENOTDIR ? .missing : .caseSensitive
        #elseif canImport(Glibc) && (arch(x86_64) || arch(arm64) || arch(riscv64) || arch(s390x) || arch(i386) || arch(arm))
            let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK)
            if fd < 0 {
                let code = errno
                return code == ENOENT || code == ENOTDIR ? .missing : .caseSensitive
            }
            defer { _ = Glibc.close(fd) }
            // _IOR('f', 1, long) in the generic ioctl encoding (read = 2 << 30, size << 16, type << 8, number);
            // the kernel stores an `int`.
            let request = UInt(2) << 30 | UInt(MemoryLayout<Int>.size) << 16 | UInt(0x66) << 8 | 1
            let caseFold: UInt32 = 0x4000_0000  // FS_CASEFOLD_FL in <linux/fs.h>
            var flags: UInt32 = 0
            guard ioctl(fd, request, &flags) == 0 else { return .caseSensitive }
            return flags & caseFold != 0 ? .caseInsensitive : .caseSensitive
        #else
            return .caseSensitive
        #endif
    }
}
