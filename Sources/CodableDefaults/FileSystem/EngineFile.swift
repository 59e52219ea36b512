/// A file an engine of another target keeps for itself, read and written with the store file's recipes: read whole
/// up to a size limit, replaced atomically and durably (a new file, flushed, renamed over the old one, the directory
/// flushed), and locked by one process at a time with a lock file beside it (`.<name>.lock`). What the file is for
/// is the engine's to say (its `role`, in every error).
package struct EngineFile: Sendable {
    /// The file.
    private let file: DurableFile

    /// The file at `path` (absolute), its symbolic links resolved as a store file's are (a link to a file not made
    /// yet included): writes replace the file a link names, never the link, and the lock is that file's, whichever
    /// of its names a store uses. Reads nothing but the links.
    /// `role` names the file in errors (`local copy`).
    package init(path: String, role: String) {
        file = DurableFile(path: DurableFile.canonicalPath(path), role: role)
    }

    /// The file's path.
    package var path: String { file.path }

    /// The file's bytes, or `nil` when there is no file. Blocks on the read.
    ///
    /// - Throws: ``DefaultsError`` (`readFailed`, `fileTooLarge`, `notARegularFile`) naming the path.
    package func read(maxSize: Int) throws(DefaultsError) -> [UInt8]? {
        try file.read(maxSize: maxSize)?.bytes
    }

    /// Replaces the file with `bytes`, atomically and durably, creating its directory when missing.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/writeFailed`` (the old file is unchanged), or
    ///   ``DefaultsError/Code-swift.struct/notDurable`` when the new file is in place but its directory could not
    ///   be flushed.
    package func write(_ bytes: [UInt8]) throws(DefaultsError) {
        try file.createDirectory()
        let (_, notDurable) = try file.write(bytes)
        if let notDurable { throw notDurable }
    }

    /// Takes the file's lock without waiting, and holds it until ``unlock(_:)`` or the process ends: a second
    /// process (or a second store of this one) using the same file is refused instead of writing over its copy.
    ///
    /// - Returns: The descriptor that holds the lock.
    /// - Throws: ``DefaultsError/Code-swift.struct/lockTimeout`` naming the holder when another holds it;
    ///   ``DefaultsError/Code-swift.struct/writeFailed`` when the lock file cannot be made.
    package func lock() throws(DefaultsError) -> Int32 {
        try file.createDirectory()
        do {
            return try file.lock(timeout: .zero)
        } catch  where error.code == .lockTimeout {
            throw DefaultsError(
                .lockTimeout,
                "the \(file.role) is in use by another store (its lock file \(file.lockPath) is held); a "
                    + "\(file.role) serves one store at a time", path: path)
        }
    }

    /// Releases a lock taken with ``lock()``.
    package func unlock(_ descriptor: Int32) {
        file.unlock(descriptor)
    }
}
