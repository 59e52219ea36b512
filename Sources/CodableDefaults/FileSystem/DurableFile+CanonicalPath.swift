#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DurableFile {
    /// `path` with symbolic links resolved: the file's own real path when it exists, else its directory's
    /// real path and its name, else `path` unchanged. Two spellings of one file give one path, so one process
    /// keeps one store per file.
    static func canonicalPath(_ path: String, system: Syscalls = .installed) -> String {
        var path = path
        // A dangling symbolic link (its target does not exist yet) is followed by hand, so the first save
        // creates the target and the link stays a link. 40 hops, as the kernel allows.
        for _ in 0..<40 {
            if let resolved = system.realpath(path) { return resolved }
            // Something that exists but has no real path (a /proc magic link to a pipe) is used as named.
            var info = stat()
            if system.stat(path, &info) == 0 { break }
            guard let target = system.readlink(path) else { break }
            path = target.hasPrefix("/") ? target : DurableFile(path: path, system: system).directory + "/" + target
        }
        let file = DurableFile(path: path, system: system)
        if let directory = system.realpath(file.directory) {
            return (directory == "/" ? "" : directory) + "/" + file.name
        }
        return path
    }
}
