import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The user's text editor, run on a file as `crontab -e` and `git commit` run it.
enum Editor {
    /// The editor's command: `$VISUAL`, else `$EDITOR`, else `vi` (an empty variable counts as unset).
    static func command(in environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        for name in ["VISUAL", "EDITOR"] {
            if let command = environment[name], !command.allSatisfy(\.isWhitespace) { return command }
        }
        return "vi"
    }

    /// Runs `command` on the file at `path` and waits for it to end.
    ///
    /// The command is run by `/bin/sh -c 'COMMAND "$1"' sh PATH`, so a command with arguments (`code --wait`,
    /// `emacs -nw`) works, and the path is one argument whatever it holds. The editor has the tool's standard
    /// input, output and error and environment. While it runs, the tool ignores SIGINT and SIGQUIT, as
    /// `system(3)` does (the editor gets them, with their default actions), so a Ctrl-C meant for the editor
    /// does not end the tool and leave its temporary copy behind.
    ///
    /// - Throws: Status 1 when the editor cannot be started, exits with a status other than 0, or is killed by a
    ///   signal.
    static func run(_ command: String, on path: String) throws(ToolError) {
        let arguments = ["sh", "-c", command + " \"$1\"", "sh", path]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // The environment as Foundation sees it: Darwin's headers declare no `environ` (it is `*_NSGetEnviron()`).
        let envp: [UnsafeMutablePointer<CChar>?] =
            ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        #if canImport(Darwin)
            // Darwin's `posix_spawnattr_t` is a pointer that `posix_spawnattr_init` allocates.
            var attributes: posix_spawnattr_t? = nil
        #else
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let oldInterrupt = signal(SIGINT, SIG_IGN)
        let oldQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, oldInterrupt)
            signal(SIGQUIT, oldQuit)
        }
        var child: pid_t = 0
        let started = posix_spawn(&child, "/bin/sh", nil, &attributes, argv, envp)
        guard started == 0 else {
            throw ToolError(
                .failure,
                "cannot start the editor \(command): \(String(cString: strerror(started))); nothing was written")
        }
        var raw: Int32 = 0
        while waitpid(child, &raw, 0) < 0 {
            guard errno == EINTR else {
                throw ToolError(
                    .failure,
                    "cannot wait for the editor \(command): \(String(cString: strerror(errno))); nothing was written")
            }
        }
        let signalNumber = raw & 0x7F
        if signalNumber != 0 {
            throw ToolError(
                .failure, "the editor \(command) was killed by signal \(signalNumber); nothing was written")
        }
        let status = (raw >> 8) & 0xFF
        if status != 0 {
            throw ToolError(.failure, "the editor \(command) exited with status \(status); nothing was written")
        }
    }
}

/// A file in a private temporary directory (mode 0700, the file 0600) for the user to edit: made by ``init(name:text:)``,
/// removed with its directory by ``remove()``, or by SIGTERM or SIGHUP while it exists.
final class EditorCopy {
    /// The file's path.
    let path: String
    /// The private directory that holds it.
    let directory: String

    /// The paths the signal handler removes, as C strings (the handler may not allocate); one copy at a time.
    ///
    /// `nonisolated(unsafe)`: set on the main thread before the handlers are installed, cleared after they are
    /// reset; the handler only reads them.
    nonisolated(unsafe) private static var pathsToRemove: (UnsafeMutablePointer<CChar>, UnsafeMutablePointer<CChar>)?

    /// Makes the directory and writes `text` to the file `name` in it.
    ///
    /// - Throws: Status 1 when the directory or the file cannot be made or written.
    init(name: String, text: String) throws(ToolError) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("codable-defaults-edit.XXXXXX").path
        var template = Array(base.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw ToolError(
                .failure,
                "cannot make a temporary directory in \(FileManager.default.temporaryDirectory.path): "
                    + "\(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        path = directory + "/" + name
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            let error = ToolError(.failure, "cannot make \(path): \(String(cString: strerror(errno)))")
            rmdir(directory)
            throw error
        }
        let failure = Output.writeAll(text, to: descriptor)
        close(descriptor)
        Self.pathsToRemove = (strdup(path), strdup(directory))
        for number in [SIGTERM, SIGHUP] {
            signal(number) { number in
                // Async-signal-safe calls only: the editor may have left other files, so rmdir may fail.
                if let (file, directory) = EditorCopy.pathsToRemove {
                    unlink(file)
                    rmdir(directory)
                }
                signal(number, SIG_DFL)
                raise(number)
            }
        }
        if let failure {
            let error = ToolError(.failure, "cannot write \(path): \(String(cString: strerror(failure)))")
            remove()
            throw error
        }
    }

    /// The file's bytes, as the editor left them.
    ///
    /// - Throws: Status 1 when the file cannot be read (the editor removed it).
    func bytes() throws(ToolError) -> [UInt8] {
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ToolError(.failure, "cannot read the edited copy \(path): \(error.localizedDescription)")
        }
    }

    /// Removes the directory and everything in it (the copy, and what the editor left there: a backup, a swap
    /// file); a failure is reported on standard error.
    func remove() {
        for number in [SIGTERM, SIGHUP] { signal(number, SIG_DFL) }
        if let (file, directory) = Self.pathsToRemove {
            free(file)
            free(directory)
            Self.pathsToRemove = nil
        }
        do {
            try FileManager.default.removeItem(atPath: directory)
        } catch {
            Output.printError(
                "codable-defaults: warning: cannot remove the temporary directory \(directory): "
                    + "\(error.localizedDescription)\n")
        }
    }
}
