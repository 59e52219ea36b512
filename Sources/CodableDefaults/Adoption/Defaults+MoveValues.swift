import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Defaults {
    /// What a move of settings into a store did, key by key: see
    /// ``moveValues(fromUserDefaults:keys:sourceNames:removingMovedValues:marker:)-8ya8a`` and
    /// ``moveValue(_:fromFile:)-ew7r``.
    public struct MoveReport: Sendable, Equatable {
        /// The keys whose values moved into the store, by their names in the store, in the order asked.
        public var moved: [String] = []
        /// The keys the store already held a value for: the store's value was kept, the old one left where it was.
        public var kept: [String] = []
        /// The keys an earlier move took (the store's marker lists them): not looked at again.
        public var alreadyMoved: [String] = []
        /// The keys the source holds no value for: nothing moved, and nothing remembered, so a later move takes a
        /// value that appears by then (unless the store holds one of its own).
        public var absent: [String] = []
        /// The keys whose old value did not convert to the key's type, each with why; every such value stays
        /// where it was, and a later move tries it again.
        public var failures: [Failure] = []

        /// A key whose old value did not move, and why.
        public struct Failure: Sendable, Equatable {
            /// The key's name in the store.
            public var key: String
            /// Where the value is: its name in `UserDefaults`, or the path of its file.
            public var source: String
            /// Why it did not convert: `decodingFailed` (no form of the value decodes as the key's type; the
            /// error says how the first form failed), `invalidValue` (it breaks one of the key's constraints),
            /// `invalidJSON` (a file that is not JSON, with its line and column) or `readFailed`. A secret key's
            /// error quotes no part of the value.
            public var error: DefaultsError
        }

        /// A report with nothing in it.
        public init() {}
    }

    /// The name of the store member that remembers which `UserDefaults` keys
    /// ``moveValues(fromUserDefaults:keys:sourceNames:removingMovedValues:marker:)-8ya8a`` has moved (by default).
    public static let movedFromUserDefaultsMarker = "CodableDefaults.movedFromUserDefaults"

    /// Moves the settings an app kept in `UserDefaults` into this store, once: each key's value, from whichever
    /// form it is stored in, becomes the key's typed value, all of them in one durable save.
    ///
    /// ```swift
    /// let report = try Defaults.standard.moveValues(
    ///     fromUserDefaults: nil, keys: [.volume, .theme, .recentFiles], removingMovedValues: true)
    /// for failure in report.failures { print("not moved:", failure.error) }
    /// ```
    ///
    /// Only the values the app stored are read (the domain's persistent values: never registered defaults or
    /// launch arguments). A value is tried, as the key's type, in each form apps store values in, and the first
    /// that decodes is taken: the property-list value itself (a number, string, date, data, array or dictionary:
    /// what `@AppStorage` and `set(_:forKey:)` store, and the raw value of a `RawRepresentable`); a string's
    /// text as JSON (how sindresorhus/Defaults stores a `Codable` value); data's bytes as JSON or as a property
    /// list (the hand-rolled `JSONEncoder` pattern). A date is then what the store keeps for a `Date`, data what
    /// it keeps for `Data`. A value that decodes is checked against the key's constraints.
    ///
    /// It is safe to call at every launch. The store keeps a marker, the member `marker`, listing the
    /// `UserDefaults` names it has dealt with (moved, or kept because the store held a value), written in the same
    /// save as the values: a later call skips them (``MoveReport/alreadyMoved``), and moves only keys added to
    /// `keys` since, or whose value appeared since (``MoveReport/absent`` lists those without one). A key the store
    /// already holds a value for keeps it (``MoveReport/kept``). A value that converts in no form is reported
    /// (``MoveReport/failures``), stays in `UserDefaults`, and is tried again by the next call. Nothing moved is
    /// ever removed from `UserDefaults` unless `removingMovedValues`, and then only after the save is durable, and
    /// only while `UserDefaults` still holds the value that was moved (one written since stays).
    ///
    /// Thread: any; it waits for the store's lock file (or, on etcd, for the cluster) as
    /// ``modify(forKeys:_:)-l5vt`` does.
    ///
    /// - Parameters:
    ///   - suiteName: The `UserDefaults` suite (an app group's identifier, or any suite name); `nil` for the
    ///     app's own domain, `UserDefaults.standard`'s (the bundle identifier, or the process name without one).
    ///   - keys: The keys to move, each named in `UserDefaults` as in this store unless `sourceNames` says
    ///     otherwise.
    ///   - sourceNames: The `UserDefaults` name of a key stored there under another name, by its name here; two
    ///     keys may not name one `UserDefaults` key.
    ///   - removingMovedValues: Whether to remove each moved value from `UserDefaults` once the store's save is
    ///     durable (with `removeObject(forKey:)`; `UserDefaults` persists the removal as it persists any change).
    ///   - marker: The store member that lists the `UserDefaults` names dealt with; use one per source.
    /// - Returns: What moved, what was kept, what an earlier call moved, and what did not convert.
    /// - Throws: ``DefaultsError``, with `UserDefaults` untouched: what ``modify(forKeys:_:)-l5vt`` throws
    ///   (`writeFailed`, `lockTimeout`, …, with nothing written; `notDurable` when the values and the marker are
    ///   in the store file but its directory could not be flushed, so `UserDefaults` keeps its copy, which later
    ///   calls leave alone); `invalidValue` when the marker member holds something else than an array of
    ///   strings; `invalidArgument` when two keys have one name or one `UserDefaults` name, a key is the marker,
    ///   or `UserDefaults` refuses `suiteName` (the app's own bundle identifier: pass `nil`).
    @discardableResult
    public func moveValues(
        fromUserDefaults suiteName: String?, keys: [AnyKey], sourceNames: [String: String] = [:],
        removingMovedValues: Bool = false, marker: String = Defaults.movedFromUserDefaultsMarker
    ) throws(DefaultsError) -> MoveReport {
        let candidates = try userDefaultsCandidates(suiteName, keys: keys, sourceNames: sourceNames)
        let report = try move(candidates, marker: marker)
        if removingMovedValues { try Self.removeMoved(report, of: candidates, suiteName: suiteName) }
        return report
    }

    /// Moves the settings an app kept in `UserDefaults` into this store, once, as
    /// ``moveValues(fromUserDefaults:keys:sourceNames:removingMovedValues:marker:)-8ya8a`` does, suspending instead of
    /// blocking while it waits for the store's lock file or for etcd.
    ///
    /// - Throws: What ``moveValues(fromUserDefaults:keys:sourceNames:removingMovedValues:marker:)-8ya8a`` throws.
    @discardableResult
    public func moveValues(
        fromUserDefaults suiteName: String?, keys: [AnyKey], sourceNames: [String: String] = [:],
        removingMovedValues: Bool = false, marker: String = Defaults.movedFromUserDefaultsMarker
    ) async throws(DefaultsError) -> MoveReport {
        let candidates = try userDefaultsCandidates(suiteName, keys: keys, sourceNames: sourceNames)
        let report = try await move(candidates, marker: marker)
        if removingMovedValues { try Self.removeMoved(report, of: candidates, suiteName: suiteName) }
        return report
    }

    /// Moves the value a file of its own holds (JSON, as `JSONEncoder` writes a value: swift-sharing's
    /// `.fileStorage`, or a "save a `Codable` value to a file" helper) into `key`, then renames the file, so the
    /// next call finds nothing to move.
    ///
    /// ```swift
    /// let profile = Defaults.Key<Profile?>("profile")
    /// try defaults.moveValue(profile, fromFile: documents.appendingPathComponent("profile.json"))
    /// ```
    ///
    /// The file's value must decode as the key's type and follow its constraints; then it is stored with one
    /// durable save, and only after that save the file is renamed to `<name>.moved` (`<name>.moved-2`, … when
    /// that exists), never deleted. A value that does not decode, or a file that is not JSON, is reported
    /// (``MoveReport/failures``, with the line and column) and the file left as it is. When the store already
    /// holds a value for the key, it is kept (``MoveReport/kept``) and the file left as it is. Without the file
    /// (moved before, or never written) the report is empty.
    ///
    /// Thread: any; it waits for the store's lock file as ``modify(forKeys:_:)-l5vt`` does.
    ///
    /// - Throws: ``DefaultsError``: what ``modify(forKeys:_:)-l5vt`` throws, with nothing written and the file
    ///   where it was; `writeFailed` naming the file when the value was stored but the file could not be renamed
    ///   (a later call then finds the store holding the value, and keeps it; should the store lose the value, by a
    ///   reset, the next call would move the file's again).
    @discardableResult
    public func moveValue(_ key: AnyKey, fromFile url: URL) throws(DefaultsError) -> MoveReport {
        guard let (file, candidate) = fileCandidate(key, url) else { return MoveReport() }
        let report = try move([candidate], marker: nil)
        if !report.moved.isEmpty { try Self.renameMovedFile(file) }
        return report
    }

    /// Moves the value a file of its own holds into `key`, as ``moveValue(_:fromFile:)-ew7r`` does, suspending instead
    /// of blocking while it waits for the store's lock file or for etcd.
    ///
    /// - Throws: What ``moveValue(_:fromFile:)-ew7r`` throws.
    @discardableResult
    public func moveValue(_ key: AnyKey, fromFile url: URL) async throws(DefaultsError) -> MoveReport {
        guard let (file, candidate) = fileCandidate(key, url) else { return MoveReport() }
        let report = try await move([candidate], marker: nil)
        if !report.moved.isEmpty { try Self.renameMovedFile(file) }
        return report
    }

    /// The keys to move from the `UserDefaults` domain of `suiteName` (`nil`: the app's), each with its value
    /// converted, or why not.
    ///
    /// - Throws: `invalidArgument` when there is no such suite; `readFailed` when its values do not read.
    private func userDefaultsCandidates(
        _ suiteName: String?, keys: [AnyKey], sourceNames: [String: String]
    ) throws(DefaultsError) -> [MoveCandidate] {
        var sources = Set<String>()
        for key in keys {
            let sourceName = sourceNames[key.name] ?? key.name
            guard sources.insert(sourceName).inserted else {
                throw DefaultsError(
                    .invalidArgument,
                    "two keys name the UserDefaults key \(KeyDescription.quoted(sourceName)) as theirs; nothing was moved",
                    key: key.name)
            }
        }
        let domain = try Self.domain(suiteName)
        return keys.map { key -> MoveCandidate in
            let sourceName = sourceNames[key.name] ?? key.name
            guard let value = domain[sourceName] else { return MoveCandidate(key: key, source: sourceName, .absent) }
            var candidate = MoveCandidate(
                key: key, source: sourceName, key.moved(from: Self.forms(of: value), options: store.options))
            candidate.original = value
            return candidate
        }
    }

    /// The values the app stored in the `UserDefaults` domain of `suiteName` (`nil`: the app's).
    ///
    /// - Throws: `invalidArgument` when `UserDefaults` refuses the suite name; `readFailed` when its values do not
    ///   read.
    private static func domain(_ suiteName: String?) throws(DefaultsError) -> [String: PropertyListValue] {
        let source = try userDefaults(suiteName)
        let domainName = suiteName ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        return try propertyListValues(of: source.persistentDomain(forName: domainName) ?? [:])
    }

    /// The suite `suiteName`, or `UserDefaults.standard` for `nil`.
    ///
    /// - Throws: `invalidArgument` when `UserDefaults` refuses the name.
    private static func userDefaults(_ suiteName: String?) throws(DefaultsError) -> UserDefaults {
        guard let suiteName else { return .standard }
        guard let suite = UserDefaults(suiteName: suiteName) else {
            throw DefaultsError(
                .invalidArgument,
                "UserDefaults refuses the suite name \(suiteName) (the app's own bundle identifier, or the global "
                    + "domain): pass nil to move the app's own values", key: nil)
        }
        return suite
    }

    /// Removes the values `report` says moved from the suite `suiteName`: each only while it is still the value
    /// that was read (`original`), so a value written since (by an extension, or code not yet moved over) stays.
    private static func removeMoved(
        _ report: MoveReport, of candidates: [MoveCandidate], suiteName: String?
    ) throws(DefaultsError) {
        let source = try userDefaults(suiteName)
        let current = try domain(suiteName)
        let moved = Set(report.moved)
        for candidate in candidates where moved.contains(candidate.key.name) {
            guard let original = candidate.original, current[candidate.source] == original else { continue }
            source.removeObject(forKey: candidate.source)
        }
    }

    /// The file at `url` to move into `key`, with its value converted or why not; `nil` when there is no file.
    private func fileCandidate(_ key: AnyKey, _ url: URL) -> (DurableFile, MoveCandidate)? {
        let file = DurableFile(path: url.path, role: "value")
        let outcome: MoveCandidate.Outcome
        do throws(DefaultsError) {
            guard let (bytes, _) = try file.read(maxSize: store.options.maximumFileSize) else { return nil }
            guard let text = String(utf8Validating: bytes) else {
                throw DefaultsError(.invalidJSON, "the file is not UTF-8 text, so not JSON", path: file.path)
            }
            do throws(DefaultsError) {
                outcome = key.moved(from: [try JSONValue(parsing: text)], options: store.options)
            } catch {
                var error = error
                error.path = file.path
                if key.isSecret { error.message = "the file is not JSON (details withheld: the key is secret)" }
                outcome = .failed(error)
            }
        } catch {
            outcome = .failed(error)
        }
        return (file, MoveCandidate(key: key, source: file.path, outcome))
    }

    /// A key to move, where its value was, and what became of its value.
    struct MoveCandidate: Sendable {
        /// What became of a key's old value.
        enum Outcome: Sendable {
            /// There was none.
            case absent
            /// It converted to this stored form of the key's type.
            case value(JSONValue)
            /// It did not convert.
            case failed(DefaultsError)
        }

        var key: AnyKey
        var source: String
        var outcome: Outcome
        /// The value as the source held it, when it is a `UserDefaults` value.
        var original: PropertyListValue?

        init(key: AnyKey, source: String, _ outcome: Outcome) {
            self.key = key
            self.source = source
            self.outcome = outcome
        }
    }

    /// Stores the converted values of `candidates` in one atomic, durable update (see ``applying(_:marker:)``).
    private func move(_ candidates: [MoveCandidate], marker: String?) throws(DefaultsError) -> MoveReport {
        let names = candidates.map(\.key.name) + (marker.map { [$0] } ?? [])
        do {
            return try modify(
                forKeys: names, secretNames: Self.secretNames(candidates), Self.applying(candidates, marker: marker))
        } catch {
            throw Self.moveError(error)
        }
    }

    /// Stores the converted values of `candidates` in one atomic, durable update, suspending while it waits.
    private func move(_ candidates: [MoveCandidate], marker: String?) async throws(DefaultsError) -> MoveReport {
        let names = candidates.map(\.key.name) + (marker.map { [$0] } ?? [])
        do {
            let secretNames = Self.secretNames(candidates)
            let body = Self.applying(candidates, marker: marker)
            return try await onQueueUntyped { try self.modify(forKeys: names, secretNames: secretNames, body) }
        } catch {
            throw Self.moveError(error)
        }
    }

    /// The names of the secret keys among `candidates`: a move's history record keeps none of their values, though
    /// the store may not have met their typed keys yet.
    private static func secretNames(_ candidates: [MoveCandidate]) -> Set<String> {
        Set(candidates.lazy.filter(\.key.isSecret).map(\.key.name))
    }

    /// The error a move's update threw: always a ``DefaultsError`` (``applying(_:marker:)`` throws no other).
    private static func moveError(_ error: any Error) -> DefaultsError {
        error as? DefaultsError ?? DefaultsError(.invalidArgument, "the move failed: \(error)", key: nil)
    }

    /// The update that stores the converted values of `candidates` (the store's values of their names, then the
    /// marker's), skipping the names `marker` lists and keeping values the store holds; it adds the names dealt
    /// with to `marker` (no marker when `nil`).
    private static func applying(
        _ candidates: [MoveCandidate], marker: String?
    ) -> @Sendable (inout [JSONValue?]) throws -> MoveReport {
        { values in
            var report = MoveReport()
            var done = try marker.map { marker throws(DefaultsError) in
                try markedNames(values[values.count - 1], marker: marker)
            }
            let before = done
            for (index, candidate) in candidates.enumerated() {
                let name = candidate.key.name
                if done?.contains(candidate.source) == true {
                    report.alreadyMoved.append(name)
                    continue
                }
                switch candidate.outcome {
                case .absent:
                    // Not remembered: a value that appears later (written by code not yet moved over) is moved
                    // then, unless the store has one of its own by that time.
                    report.absent.append(name)
                case .failed(let error):
                    report.failures.append(MoveReport.Failure(key: name, source: candidate.source, error: error))
                case .value(let value):
                    done?.insert(candidate.source)
                    if values[index] != nil {
                        report.kept.append(name)
                    } else {
                        values[index] = value
                        report.moved.append(name)
                    }
                }
            }
            if let done, done != before {
                values[values.count - 1] = .array(
                    done.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map(JSONValue.string))
            }
            return report
        }
    }

    /// The `UserDefaults` names the marker's value lists.
    ///
    /// - Throws: `invalidValue` naming the marker when it holds something else than an array of strings.
    private static func markedNames(_ value: JSONValue?, marker: String) throws(DefaultsError) -> Set<String> {
        guard let value else { return [] }
        guard case .array(let elements) = value else {
            throw DefaultsError(
                .invalidValue,
                "the marker of moved UserDefaults keys is not an array of their names; nothing was moved", key: marker
            )
        }
        var names = Set<String>()
        for element in elements {
            guard case .string(let name) = element else {
                throw DefaultsError(
                    .invalidValue,
                    "the marker of moved UserDefaults keys holds something else than a name; nothing was moved",
                    key: marker)
            }
            names.insert(name)
        }
        return names
    }
}

extension Defaults {
    /// The values of a `UserDefaults` domain, read as a property list reads them (so a boolean stays a boolean and a
    /// date a date on every platform).
    ///
    /// - Throws: `readFailed` when the domain does not serialize as a property list.
    static func propertyListValues(of domain: [String: Any]) throws(DefaultsError) -> [String: PropertyListValue] {
        do {
            let bytes = try PropertyListSerialization.data(fromPropertyList: domain, format: .binary, options: 0)
            return try PropertyListDecoder().decode([String: PropertyListValue].self, from: bytes)
        } catch {
            throw DefaultsError(
                .readFailed, "the UserDefaults values cannot be read as a property list: \(error); nothing was moved",
                key: nil)
        }
    }

    /// The forms a `UserDefaults` value may hold a key's value in, in the order they are tried: the value itself;
    /// a string's text as JSON; data's bytes as JSON, then as a property list. Empty for a value that has no JSON
    /// form (a real that is not a number).
    static func forms(of value: PropertyListValue) -> [JSONValue] {
        guard let direct = value.json else { return [] }
        var forms = [direct]
        switch value {
        case .string(let text):
            // Only text that is JSON is a form; most strings are not, and are simply not tried again.
            if let json = try? JSONValue(parsing: text) { forms.append(json) }
        case .data(let bytes):
            // Probes, as for a string: bytes that are neither JSON nor a property list are no other form.
            if let text = String(utf8Validating: bytes), let json = try? JSONValue(parsing: text) {
                forms.append(json)
            } else if let inner = try? PropertyListDecoder().decode(PropertyListValue.self, from: bytes),
                let json = inner.json
            {
                forms.append(json)
            }
        default:
            break
        }
        return forms
    }

    /// Renames `file`, whose value was moved, to `<name>.moved` (or `<name>.moved-2`, … when taken).
    ///
    /// - Throws: `writeFailed` naming the file.
    static func renameMovedFile(_ file: DurableFile) throws(DefaultsError) {
        let system = file.system
        var target = file.path + ".moved"
        var number = 1
        var info = stat()
        while system.lstat(target, &info) == 0 {
            number += 1
            target = file.path + ".moved-\(number)"
        }
        if system.rename(file.path, target) != 0 {
            throw file.failure(
                .writeFailed, "the value moved into the store, but the file could not be renamed to \(target)",
                errno: Platform.errno)
        }
    }
}
