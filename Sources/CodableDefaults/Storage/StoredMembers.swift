/// Every member a storage holds, as one whole read or write left them: a store file's index (its bytes and where
/// each member lies in them, see ``JSONIndex``), the image a write made (``FileImage``), or a list (memory, a
/// migration's result). Nothing per member is built until it is asked for: a value is copied out, or a name
/// decoded, by the call that wants it.
///
/// A value type, shared read-only between the store and its storage (the file's bytes are one buffer, not copied).
package struct StoredMembers: Sendable {
    private enum Representation {
        case index(JSONIndex)
        case image(FileImage)
        case list([MemberName: [UInt8]])
    }

    private let representation: Representation

    /// The members of an indexed file.
    init(_ index: JSONIndex) {
        representation = .index(index)
    }

    /// The members of a file image (sharing its buffer).
    init(_ image: FileImage) {
        representation = .image(image)
    }

    /// The members of a list; when a name occurs more than once, its last member wins.
    init(_ members: [ParsedMember]) {
        var list: [MemberName: [UInt8]] = [:]
        list.reserveCapacity(members.count)
        for member in members { list[MemberName(member.key)] = member.value }
        representation = .list(list)
    }

    /// No member.
    static let empty = StoredMembers([])

    /// How many members there are.
    var count: Int {
        switch representation {
        case .index(let index): index.count
        case .image(let image): image.count
        case .list(let list): list.count
        }
    }

    /// The compact JSON value of the member named `name` (compared by UTF-8 bytes), copied out; `nil` when there is
    /// none.
    func value(named name: String) -> [UInt8]? {
        switch representation {
        case .index(let index): index.position(of: name).map { index.value(at: $0) }
        case .image(let image): image.index(of: name).map { Array(image.value(at: $0)) }
        case .list(let list): list[MemberName(name)]
        }
    }

    /// Whether there is no member.
    var isEmpty: Bool { count == 0 }

    /// Whether a member is named `name`.
    func contains(_ name: String) -> Bool {
        switch representation {
        case .index(let index): index.position(of: name) != nil
        case .image(let image): image.index(of: name) != nil
        case .list(let list): list[MemberName(name)] != nil
        }
    }

    /// Calls `body` with each member's name (decoded on each call), in no particular order.
    func forEachName(_ body: (String) -> Void) {
        switch representation {
        case .index(let index): for position in 0..<index.count { body(index.key(at: position)) }
        case .image(let image): for position in 0..<image.count { body(image.name(at: position)) }
        case .list(let list): for name in list.keys { body(name.string) }
        }
    }

    /// The members, each name and value copied out (for migrations and tests): a file's in the file's order, a
    /// list's sorted by name as a file orders them.
    var members: [ParsedMember] {
        switch representation {
        case .index(let index):
            (0..<index.count).map { ParsedMember(key: index.key(at: $0), value: index.value(at: $0)) }
        case .image(let image):
            image.members
        case .list(let list):
            list.map { ParsedMember(key: $0.key.string, value: $0.value) }.sorted { precedesInFile($0.key, $1.key) }
        }
    }

    /// The file's bytes these members are offsets into (`nil` for a list), for tests of who shares them.
    var fileBytes: [UInt8]? {
        switch representation {
        case .index(let index): index.bytes
        case .image(let image): image.bytes
        case .list: nil
        }
    }

    /// The file image of these members, which a write splices its changes into: a canonical file's own buffer when
    /// it is one (see ``FileImage/init(index:)``).
    var image: FileImage {
        switch representation {
        case .index(let index): FileImage(index: index)
        case .image(let image): image
        case .list(let list): FileImage(members: list.lazy.map { (name: $0.key.string, value: $0.value) })
        }
    }
}
