#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The history of a store file: `.<name>.history` beside it, one ``HistoryRecord`` a line (JSON Lines).
///
/// Written only by a save holding the store's lock file, after the store file was renamed into place: a record
/// never claims a change the store file does not hold, and a crash between the rename and the record loses that
/// save's record only. A record is appended (`O_APPEND`) and flushed (`fsync`); a line cut short by a crash is
/// cut off by the next append and skipped, with a notice, by a read. Past its ``Defaults/HistoryLimit`` the
/// newest records are written to a new file with the durable-write recipe (temporary file, `fsync`, `rename`,
/// directory `fsync`). Readers take no lock: they see whole appended lines, or a last line being written, which
/// they skip.
///
/// A rewrite starts with one line that is not a record, the header:
/// `{"maximumBytes":1048576,"maximumSaves":100,"secretKeys":["token"]}`. Its bounds are the largest any writer
/// of the file declared: every writer trims to them (one with a smaller bound of its own, a tool, never cuts
/// another's longer history), and a writer with a larger bound rewrites the header once, when it first appends.
/// Its `secretKeys` are the keys records marked secret: they stay secret for every writer after the records are
/// dropped, and their values are withheld in the records a rewrite keeps.
///
/// The file stays readable and trimmable: an append that would take it past its bounds rewrites it instead, with
/// the newest records within three quarters of them and the new record, so its size is at most its byte bound or,
/// when one record alone is larger, that record's.
struct HistoryLog: Sendable {
    /// What a writer knows of the history file after its last append, so that the next one need not read it.
    struct Tail: Equatable, Sendable {
        /// The file as this writer left it.
        var identity: FileIdentity
        /// The last record's revision.
        var revision: Int
        /// How many records it holds.
        var count: Int
        /// The keys its records mark secret (see ``HistoryLog/secretNames(in:lines:)``).
        var secretNames: Set<String>
        /// The bounds its header keeps (the largest any writer declared); `nil` without a header.
        var recordedLimit: Defaults.HistoryLimit?
    }

    /// The history file.
    let file: DurableFile
    /// Its bounds.
    let limit: Defaults.HistoryLimit
    /// The store file's size limit: a history file is read up to twice it plus the history's own bound.
    let maximumFileSize: Int

    /// The history of the store file `store`.
    init(of store: DurableFile, limit: Defaults.HistoryLimit, maximumFileSize: Int) {
        file = DurableFile(
            path: store.directory + "/." + store.name + ".history", system: store.system, role: "history")
        self.limit = limit
        self.maximumFileSize = maximumFileSize
    }

    /// The most bytes a read takes: the largest file the bounds allow (a byte bound another writer declared up to
    /// 64 MiB more than this one's), or one record of a save (each value at most the store file's size, old and
    /// new, and their names).
    private var readLimit: Int {
        let bytes = max(limit.maximumBytes, 64 << 20)
        return Int(min(Int64(Int32.max), 3 * Int64(maximumFileSize) + 2 * Int64(bytes) + 4096))
    }

    /// The bounds this writer keeps the file to: the largest of its own and those the header keeps, each at most
    /// what this writer can read back.
    private func effectiveLimit(_ recorded: Defaults.HistoryLimit?) -> Defaults.HistoryLimit {
        guard let recorded else { return limit }
        return Defaults.HistoryLimit(
            maximumSaves: max(limit.maximumSaves, recorded.maximumSaves),
            maximumBytes: min(max(limit.maximumBytes, recorded.maximumBytes), max(limit.maximumBytes, 64 << 20)))
    }

    // MARK: Appending

    /// Appends the record `make` builds for the next revision. Call holding the store's lock file, after the
    /// store file holds the save. `tail` is what this writer knew after its last append (`nil`: nothing); it
    /// becomes what it knows now.
    ///
    /// - Returns: The revision recorded.
    /// - Throws: ``DefaultsError`` when the history cannot be read or written; the save stands, its record is lost.
    func append(_ make: (Int) -> HistoryRecord, tail: inout Tail?) throws(DefaultsError) -> Int {
        let system = file.system
        let fd = system.open(file.path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        if fd < 0 { throw failure("cannot open the history file", errno: Platform.errno) }
        defer { _ = system.close(fd) }
        var info = stat()
        if system.fstat(fd, &info) != 0 { throw failure("cannot inspect the history file", errno: Platform.errno) }
        guard Platform.isRegular(info.st_mode) else {
            throw DefaultsError(
                .notARegularFile, "the history path is not a regular file; the save stands, unrecorded",
                path: file.path)
        }
        let isNew = info.st_size == 0
        var known = tail
        var line: [UInt8] = []
        if known?.identity != FileIdentity(info) {
            // Another writer appended (or the file is new to this one): read it for its last revision. A last line
            // without its line break that is a whole record (a crash right before the break, a hand edit) gets its
            // break; one that is not (a crash in the middle of the record) is cut off, so the record does not join
            // it, and its revision is not reused, as no record claimed it.
            let (bytes, _) = try readAll()
            var (records, complete) = Self.lines(of: bytes)
            if complete < bytes.count {
                if case .record = Self.parsedLine(bytes[complete...]) {
                    records.append(complete..<bytes.count)
                    line.append(0x0A)
                } else if ftruncate(fd, off_t(complete)) != 0 {
                    throw failure("cannot cut off the history's unfinished last line", errno: Platform.errno)
                }
            }
            // Read by the parser `history` reads records with, whatever their spacing or the size of their numbers:
            // the count goes on from the last record `history` shows.
            let revision =
                records.reversed().lazy.compactMap { range -> Int? in
                    guard case .record(let record) = Self.parsedLine(bytes[range]) else { return nil }
                    return record.revision
                }.first ?? 0
            let header = records.first.flatMap { Self.header(in: bytes[$0]) }
            known = Tail(
                identity: FileIdentity(info), revision: revision, count: records.count - (header == nil ? 0 : 1),
                secretNames: Self.secretNames(in: bytes, lines: records), recordedLimit: header?.limit)
        }
        let (revision, overflow) = known!.revision.addingReportingOverflow(1)
        if overflow {
            throw DefaultsError(
                .writeFailed,
                "the history's last revision is \(known!.revision), the largest a revision can be; the save stands, "
                    + "unrecorded (move the history file aside to start its count again)", path: file.path)
        }
        // A key another writer declared secret is secret for this one too (a tool cannot know it otherwise).
        var record = make(revision)
        record.withholdValues(of: known!.secretNames)
        known!.secretNames.formUnion(record.secretNames)
        line += record.line
        line.append(0x0A)
        // A file this writer's bound is not yet recorded in, or that the record would take past its bounds, is
        // rewritten with it instead of appended to: the header keeps the largest bounds, and the size stays
        // within them (or one record's).
        let recorded = known!.recordedLimit
        let effective = effectiveLimit(recorded)
        // A file without a header was kept to the default bounds (or is new): only another bound is recorded.
        let unrecorded =
            recorded.map { limit.maximumSaves > $0.maximumSaves || limit.maximumBytes > $0.maximumBytes }
            ?? (limit != .default)
        if unrecorded || known!.count + 1 > effective.maximumSaves
            || Int(info.st_size) + line.count > effective.maximumBytes
        {
            tail = try rewrite(
                appending: record.line, revision: revision, secretNames: known!.secretNames, limit: effective)
            return revision
        }
        try writeAll(fd, line)
        if system.fullSync(fd) != 0 {
            throw DefaultsError(
                .writeFailed,
                "cannot flush the history file (fsync): \(Platform.describe(Platform.errno)); the save stands, and "
                    + "its record, written, may not survive a power loss", path: file.path, errno: Platform.errno)
        }
        // A new history file's name must survive a power loss too.
        if isNew, let notDurable = file.syncDirectory() { throw notDurable }
        if system.fstat(fd, &info) != 0 { throw failure("cannot inspect the history file", errno: Platform.errno) }
        tail = Tail(
            identity: FileIdentity(info), revision: revision, count: known!.count + 1, secretNames: known!.secretNames,
            recordedLimit: recorded)
        return revision
    }

    /// Rewrites the history with the header (`limit`, the largest bounds, and the secret keys), the newest records
    /// that fit with `line` (the new record) within `limit` — all of them when they do, else within three quarters
    /// of both bounds, so that the file is rewritten once a quarter of the bound — and `line`, durably.
    private func rewrite(
        appending line: [UInt8], revision: Int, secretNames: Set<String>, limit: Defaults.HistoryLimit
    ) throws(DefaultsError) -> Tail {
        let (bytes, _) = try readAll()
        var (all, complete) = Self.lines(of: bytes)
        // A whole last record without its line break (see ``append(_:tail:)``) is kept; a cut one is not.
        if complete < bytes.count, case .record = Self.parsedLine(bytes[complete...]) {
            all.append(complete..<bytes.count)
        }
        let records = all.filter { Self.header(in: bytes[$0]) == nil }
        let total = records.reduce(line.count + 1) { $0 + $1.count + 1 }
        let fits = records.count + 1 <= limit.maximumSaves && total <= limit.maximumBytes
        let keepCount = fits ? records.count : max(0, limit.maximumSaves * 3 / 4 - 1)
        let keepBytes = (fits ? limit.maximumBytes : limit.maximumBytes * 3 / 4) - (line.count + 1)
        var kept: [Range<Int>] = []
        var size = 0
        for range in records.reversed() {
            let length = range.count + 1
            guard kept.count < keepCount && size + length <= keepBytes else { break }
            kept.append(range)
            size += length
        }
        var out = Self.headerLine(limit: limit, secretNames: secretNames)
        out.append(0x0A)
        out.reserveCapacity(out.count + size + line.count + 1)
        for range in kept.reversed() {
            if !secretNames.isEmpty, case .record(var record) = Self.parsedLine(bytes[range]) {
                record.withholdValues(of: secretNames)
                out += record.line
            } else {
                out.append(contentsOf: bytes[range])
            }
            out.append(0x0A)
        }
        out += line
        out.append(0x0A)
        let (identity, notDurable) = try file.write(out)
        if let notDurable { throw notDurable }
        return Tail(
            identity: identity, revision: revision, count: kept.count + 1, secretNames: secretNames,
            recordedLimit: limit)
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(DefaultsError) {
        var offset = 0
        let code: Int32? = bytes.withUnsafeBytes { buffer in
            while offset < buffer.count {
                let written = file.system.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if Platform.errno == EINTR { continue }
                    return Platform.errno
                }
                offset += written
            }
            return nil
        }
        if let code { throw failure("cannot append to the history file", errno: code) }
    }

    private func failure(_ what: String, errno: Int32) -> DefaultsError {
        DefaultsError(
            .writeFailed, "\(what): \(Platform.describe(errno)); the save stands, its history record is lost",
            path: file.path, errno: errno)
    }

    // MARK: Reading

    /// The file's bytes (empty when there is none).
    private func readAll() throws(DefaultsError) -> (bytes: [UInt8], identity: FileIdentity?) {
        guard let (bytes, identity) = try file.read(maxSize: readLimit) else { return ([], nil) }
        return (bytes, identity)
    }

    /// The records, oldest first, and a notice for each line that is not one (a save's record cut short by a
    /// crash, or a line edited by hand), with its line and column; the whole lines among those (not a last line a
    /// crash cut short) also in `unreadable`, with the revision of the record before each.
    ///
    /// - Throws: ``DefaultsError`` when the file exists but cannot be read.
    func read() throws(DefaultsError) -> (
        records: [HistoryRecord], notices: [DefaultsError], unreadable: [(after: Int, notice: DefaultsError)]
    ) {
        let (bytes, _) = try readAll()
        var records: [HistoryRecord] = []
        var notices: [DefaultsError] = []
        var unreadable: [(after: Int, notice: DefaultsError)] = []
        var header = Set<String>()
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            lineNumber += 1
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            let line = Array(bytes[start..<end])
            let finished = end < bytes.count
            start = end + 1
            if line.isEmpty { continue }
            switch Self.parsedLine(line[...]) {
            case .header(let names, _):
                header.formUnion(names)
            case .record(let record):
                records.append(record)
            case .malformed(let error):
                let why =
                    finished
                    ? error.message : "the last record is unfinished (being written, or a save was interrupted)"
                let notice = DefaultsError(
                    .invalidJSON, "a line of the history file is skipped: \(why)", path: file.path, line: lineNumber,
                    column: error.column)
                notices.append(notice)
                if finished { unreadable.append((records.last?.revision ?? 0, notice)) }
            }
        }
        // A key one record marks secret (a writer that declared it so) has its values withheld in every record,
        // older ones too, which a writer that did not know it wrote.
        let secret = records.reduce(into: header) { $0.formUnion($1.secretNames) }
        if !secret.isEmpty {
            for index in records.indices { records[index].withholdValues(of: secret) }
        }
        return (records, notices, unreadable)
    }

    /// The keys that records of `bytes` (its whole lines `lines`) mark secret. Only the lines that can name a secret
    /// are parsed: those holding the letters `secret`, or a backslash (an escape could spell them).
    static func secretNames(in bytes: [UInt8], lines: [Range<Int>]) -> Set<String> {
        var names = Set<String>()
        for range in lines {
            let line = bytes[range]
            guard mayNameASecret(line) else { continue }
            switch parsedLine(line) {
            case .header(let header, _): names.formUnion(header)
            case .record(let record): names.formUnion(record.secretNames)
            case .malformed: continue  // A line that is not a record is skipped, and reported, by `read()`.
            }
        }
        return names
    }

    /// Whether `line` holds the letters `secret` or a backslash: one pass over its bytes (a save that finds the
    /// history appended to by another writer looks at every line, so this is on the path of every such save).
    private static func mayNameASecret(_ line: ArraySlice<UInt8>) -> Bool {
        line.withUnsafeBufferPointer { buffer in
            let marker: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0x73, 0x65, 0x63, 0x72, 0x65, 0x74)
            var index = 0
            while index < buffer.count {
                let byte = buffer[index]
                if byte == UInt8(ascii: "\\") { return true }
                if byte == marker.0 && buffer.count - index >= 6 && buffer[index + 1] == marker.1
                    && buffer[index + 2] == marker.2 && buffer[index + 3] == marker.3 && buffer[index + 4] == marker.4
                    && buffer[index + 5] == marker.5
                {
                    return true
                }
                index += 1
            }
            return false
        }
    }

    /// The ranges of the whole lines of `bytes` (without their line breaks, empty ones left out), and where the
    /// last whole line ends (a line without a line break after it is unfinished).
    static func lines(of bytes: [UInt8]) -> (lines: [Range<Int>], complete: Int) {
        bytes.withUnsafeBufferPointer { buffer in
            var lines: [Range<Int>] = []
            var start = 0
            for end in buffer.indices where buffer[end] == 0x0A {
                if end > start { lines.append(start..<end) }
                start = end + 1
            }
            return (lines, start)
        }
    }

    /// What a line of the history file holds: a record, the line naming the keys records marked secret, or neither.
    enum Line {
        /// A record.
        case record(HistoryRecord)
        /// The header: the keys records marked secret, and the bounds it keeps (`nil` in a header that has none,
        /// an older one).
        case header([String], Defaults.HistoryLimit?)
        /// Not a line of the history.
        case malformed(HistoryRecord.Malformed)
    }

    /// The one reader of the history file's lines, for every use (`history`, the next save's revision, the keys
    /// marked secret, a rewrite): JSON as any writer may space it. A record's revision is a whole number from 1 up
    /// (the count a store file's saves make); any other is not a record.
    static func parsedLine(_ line: ArraySlice<UInt8>) -> Line {
        let record: HistoryRecord
        do throws(HistoryRecord.Malformed) {
            record = try HistoryRecord(line: Array(line))
        } catch {
            if let header = header(in: line) { return .header(header.secretKeys, header.limit) }
            return .malformed(error)
        }
        guard record.revision >= 1 else {
            return .malformed(
                HistoryRecord.Malformed(message: "the record's revision, \(record.revision), is not 1 or more"))
        }
        return .record(record)
    }

    /// The header of a rewritten history: `{"maximumBytes":M,"maximumSaves":N,"secretKeys":["a","b"]}`, the names
    /// sorted by their UTF-8 bytes.
    static func headerLine(limit: Defaults.HistoryLimit, secretNames: Set<String>) -> [UInt8] {
        let sorted = secretNames.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var out = Array(
            "{\"maximumBytes\":\(limit.maximumBytes),\"maximumSaves\":\(limit.maximumSaves),\"secretKeys\":[".utf8)
        for (index, name) in sorted.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONParser.appendQuoted(name, to: &out)
        }
        out += Array("]}".utf8)
        return out
    }

    /// What a header line says: the secret keys, and its bounds when it has them (an older header,
    /// `{"secretKeys":[…]}`, has none).
    struct Header: Equatable {
        /// The keys records marked secret.
        var secretKeys: [String]
        /// The largest bounds a writer declared.
        var limit: Defaults.HistoryLimit?
    }

    /// The header a line holds (however spaced); `nil` for any other line.
    static func header(in line: ArraySlice<UInt8>) -> Header? {
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONValueBytes.parse(Array(line))
        } catch {
            return nil
        }
        guard case .object(let members) = value, case .array(let names)? = members["secretKeys"],
            Set(members.keys).isSubset(of: ["secretKeys", "maximumSaves", "maximumBytes"])
        else { return nil }
        var limit: Defaults.HistoryLimit?
        if case .number(let saves)? = members["maximumSaves"], case .number(let bytes)? = members["maximumBytes"],
            let saves = saves.intValue, let bytes = bytes.intValue, saves > 0, bytes > 0
        {
            limit = Defaults.HistoryLimit(maximumSaves: saves, maximumBytes: bytes)
        }
        return Header(
            secretKeys: names.compactMap { name in
                guard case .string(let text) = name else { return nil }
                return text
            }, limit: limit)
    }
}
