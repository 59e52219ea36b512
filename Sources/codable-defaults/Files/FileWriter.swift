import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes export files: atomically, so a failed export leaves the destination as it was.
enum FileWriter {
    /// The absolute `path` with symbolic links followed, also a link whose target does not exist yet (up to 40
    /// hops), so that writing the result replaces the link's target and the link stays a link. `..` is kept
    /// for the kernel to resolve: as text, it would name another file after a link to a directory.
    static func followingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { break }
            let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : ArgumentPath.directory(of: current) + "/" + target
        }
        return current
    }

    /// Replaces the file at `path` with `text`: a temporary file beside it, flushed, then renamed over it.
    ///
    /// A new file gets mode 0600 (settings may hold secrets); an existing file keeps its mode.
    static func replace(_ path: String, with text: String) throws(ToolError) {
        func failure(_ what: String, _ code: Int32) -> ToolError {
            ToolError(.failure, "\(path): \(what): \(String(cString: strerror(code))) (errno \(code))")
        }
        let directory = ArgumentPath.directory(of: path)
        let name = path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...]
        let temporary = directory + "/." + name + ".\(getpid()).export.tmp"
        var mode: mode_t = 0o600
        var info = stat()
        if stat(path, &info) == 0 { mode = info.st_mode & 0o7777 }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { throw failure("cannot create a temporary file beside it", errno) }
        var error: ToolError?
        if fchmod(descriptor, mode) != 0 {
            error = failure("cannot set the mode of the temporary file", errno)
        } else if let code = Output.writeAll(text, to: descriptor) {
            error = failure("cannot write the temporary file", code)
        } else if fsync(descriptor) != 0 {
            error = failure("cannot flush the temporary file", errno)
        }
        if close(descriptor) != 0 && error == nil { error = failure("cannot close the temporary file", errno) }
        if error == nil && rename(temporary, path) != 0 { error = failure("cannot rename the temporary file", errno) }
        if let error {
            unlink(temporary)
            throw error
        }
    }
}
