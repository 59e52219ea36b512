#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension JSONFileStorage {
    /// Reads the schema file (at most the store's size limit); `nil` when there is none.
    func storedSchema() throws(DefaultsError) -> [UInt8]? {
        try schemaFile.read(maxSize: options.maximumFileSize)?.bytes
    }

    /// Replaces the schema file atomically and durably (a new file, flushed, renamed over the old one, the
    /// directory flushed), creating the store's directory when missing, as a save does. A flush of the directory that failed is a failure here: the caller asked for it kept.
    func storeSchema(_ bytes: [UInt8]) throws(DefaultsError) {
        let schemaFile = schemaFile
        try schemaFile.createDirectory()
        let (_, notDurable) = try schemaFile.write(bytes)
        if let notDurable { throw notDurable }
    }
}
