#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Defaults {
    /// One save as a store's history recorded it: what it changed, when, by whom, with a revision number.
    ///
    /// Returned by ``Defaults/history()-29g0`` and ``Defaults/history(forKey:)-6sdju``, newest first. A value is
    /// immutable and `Sendable`; reading a history takes no lock of the store.
    public struct HistoryEntry: Sendable, Hashable {
        /// Why the save was made.
        public enum Kind: Sendable, Hashable {
            /// A save of changes made through the API (a set, a remove, a `modify`, the tool's `write`).
            case save
            /// A revert (``Defaults/revert(toRevision:dryRun:)-1e5l3`` and its siblings, the tool's `undo`): the keys
            /// went back to what they held at `toRevision`.
            case revert(toRevision: Int)
        }

        /// Who made the save: the process that wrote it.
        public struct Author: Sendable, Hashable {
            /// The process identifier.
            public var processID: Int32
            /// The name of the user the process ran as (its effective user), or its number when it has no name.
            public var user: String
            /// The program's name.
            public var program: String
            /// The machine's host name.
            public var host: String

            /// An author of these parts.
            public init(processID: Int32, user: String, program: String, host: String) {
                self.processID = processID
                self.user = user
                self.program = program
                self.host = host
            }
        }

        /// A value before or after a change.
        public enum Value: Sendable, Hashable {
            /// Nothing was stored: the key was added (before) or removed (after).
            case absent
            /// The stored value.
            case json(JSONValue)
            /// A value was stored, but the key is secret and the history keeps no part of its value.
            case secret
        }

        /// One key's change in a save.
        public struct Change: Sendable, Hashable {
            /// The key (its name as stored).
            public var key: String
            /// What the key held before the save.
            public var oldValue: Value
            /// What the key holds after the save.
            public var newValue: Value

            /// A change of `key` from `oldValue` to `newValue`.
            public init(key: String, oldValue: Value, newValue: Value) {
                self.key = key
                self.oldValue = oldValue
                self.newValue = newValue
            }
        }

        /// The save's revision, which grows with each save, in the order the saves were made by every writer of the
        /// store. On a store file: 1 for the first save recorded, then one more for each save (they are made one at a
        /// time under its lock). On etcd: etcd's revision of the save's transaction, which grows but skips numbers
        /// (every change to the cluster takes one).
        public var revision: Int
        /// When the save was made (to the millisecond).
        public var date: Date
        /// Who made it.
        public var author: Author
        /// A plain save, or a revert.
        public var kind: Kind
        /// The keys it changed, sorted by name (by their UTF-8 bytes).
        public var changes: [Change]

        /// An entry of these parts.
        public init(revision: Int, date: Date, author: Author, kind: Kind, changes: [Change]) {
            self.revision = revision
            self.date = date
            self.author = author
            self.kind = kind
            self.changes = changes
        }
    }
}

extension Defaults.HistoryEntry {
    /// `date` as the history writes times, in UTC to the millisecond: `2026-12-03T04:05:06.789Z` (the format of
    /// a record's `time`, and of the tool's `history`).
    ///
    /// A date beyond what milliseconds in an `Int64` hold (about 292 million years from 1970, years of more than
    /// four digits are written whole) is written as the nearest time that is not; a date that is not a number
    /// as `NaN`.
    public static func timeText(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        if seconds.isNaN { return "NaN" }
        let milliseconds = HistoryTime.milliseconds(of: date) ?? (seconds > 0 ? Int64.max : Int64.min)
        return HistoryTime.text(milliseconds: milliseconds)
    }

    /// The date of a UTC time written `2026-12-03T04:05:06Z` or with a fraction of a second
    /// (`2026-12-03T04:05:06.789Z`), as ``Defaults/revert(to:dryRun:)-74bh6`` takes it: within its millisecond, so that
    /// a save recorded at that millisecond counts as made at or before it. `nil` for any other text, or a day or
    /// time that does not exist (`2026-02-30`, `24:00:00`).
    public static func date(fromTimeText text: String) -> Date? {
        HistoryTime.milliseconds(text: text).map { Date(timeIntervalSince1970: (Double($0) + 0.5) / 1000) }
    }
}
