#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the store holds for one name.
enum StoredValue {
    /// Nothing is stored: reads give the default.
    case absent
    /// A JSON fragment, compact, as read from the file or encoded at a save.
    case raw([UInt8])
    /// A value set since the last save, to be encoded at the next one (boxed, so the enum stays one word).
    case pending(Pending)

    /// Whether something is stored.
    var isPresent: Bool {
        if case .absent = self { return false }
        return true
    }

    /// Whether what is stored is a secret's sealed value (``SecretCipher``).
    var isSealed: Bool {
        if case .raw(let fragment) = self { return SecretCipher.isEnvelope(fragment) }
        return false
    }
}

/// A value set and not yet encoded.
final class Pending {
    /// The value.
    let value: any Encodable & Sendable

    init(_ value: any Encodable & Sendable) {
        self.value = value
    }
}

/// What few names have: argument and registered values, a string-key reader, observers. Kept out of
/// ``Cell`` so that the cells of a large store stay small.
final class CellExtras {
    var argument: [UInt8]?
    var overridden: LayerValue?
    var fallback: LayerValue?
    var registered: [UInt8]?
    var untypedKey: Defaults.Key<JSONValue?>?
    var observers: [Observer] = []
    var observedPath: KeyPath<Store, Void>?
}

/// Everything the store knows about one name. One cell exists per name ever used in a store and lives as
/// long as the store, so typed caches can point at it. Cells are reachable only through the store's
/// ``StoreState``, and every field is read and written inside its `withLock`.
final class Cell {
    /// The key name.
    let name: String
    /// The stored value.
    var stored: StoredValue = .absent
    /// Bumped at every change of ``stored``; a cached decoded value is valid while its version matches.
    var version: UInt64 = 0
    /// The fragment the storage held for this name when the store last read or wrote it (`nil`: no member).
    var saved: [UInt8]?
    /// Whether ``stored`` differs from the storage (a set or removal not yet written).
    var isDirty = false
    /// Whether the cell is in ``MemberState/dirty`` (it stays there after ``isDirty`` is cleared, until the next
    /// ``MemberState/pruneDirty()``): so that marking it dirty again never lists it twice.
    var isListedAsDirty = false
    /// The rarely used parts, made on first use.
    private var extras: CellExtras?

    /// Whether this is the reserved schema-version member, hidden from the key API.
    let isReserved: Bool
    /// Whether a secret key (``Defaults/Key`` made with `secret: true`) of this name was used in the store: its
    /// history then records that it changed, never its values.
    var isSecret = false

    /// Whether the value held or last saved is sealed (``SecretCipher``): the name's value rests encrypted, so
    /// a new one is sealed too, whatever declared the name secret.
    var holdsSealedValue: Bool { stored.isSealed || saved.map(SecretCipher.isEnvelope) == true }

    /// Whether the name is secret for the store: declared or marked so (``isSecret``), or its value sealed.
    var isSecretOrSealed: Bool { isSecret || holdsSealedValue }

    init(name: String) {
        self.name = name
        self.isReserved = name == Defaults.schemaVersionKey
    }

    /// The value from the argument domain (`-name value` on the command line), which reads prefer to the
    /// stored value; never written.
    var argument: [UInt8]? {
        get { extras?.argument }
        set { madeExtras.argument = newValue }
    }

    /// The value of the first override layer that has one (see ``Defaults/Layer``), which reads prefer to the
    /// stored value; never written.
    var overridden: LayerValue? {
        get { extras?.overridden }
        set { if newValue != nil || extras != nil { madeExtras.overridden = newValue } }
    }

    /// The value of the first fallback layer that has one, read when nothing is stored; never written.
    var fallback: LayerValue? {
        get { extras?.fallback }
        set { if newValue != nil || extras != nil { madeExtras.fallback = newValue } }
    }

    /// The value from the registration domain (`register(defaults:)`), read when nothing is stored; never
    /// written.
    var registered: [UInt8]? {
        get { extras?.registered }
        set { madeExtras.registered = newValue }
    }

    /// The key the untyped API reads this name through, made on first use.
    var untypedKey: Defaults.Key<JSONValue?>? {
        get { extras?.untypedKey }
        set { madeExtras.untypedKey = newValue }
    }

    /// The observers of this name.
    var observers: [Observer] {
        get { extras?.observers ?? [] }
        set { madeExtras.observers = newValue }
    }

    /// Whether anything observes this name (without copying the list): an observer, or a tracked read.
    var hasObservers: Bool {
        guard let extras else { return false }
        return !extras.observers.isEmpty || extras.observedPath != nil
    }

    /// The key path Observation tracks this name by, made by the first tracked read of it.
    var observedPath: KeyPath<Store, Void>? {
        get { extras?.observedPath }
        set { madeExtras.observedPath = newValue }
    }

    private var madeExtras: CellExtras {
        if let extras { return extras }
        let made = CellExtras()
        extras = made
        return made
    }
}

extension Cell {
    /// Where a read of this cell finds its value: the argument domain, else an override layer, else the stored
    /// value, else a fallback layer, else the registration domain. `.absent` when none has one.
    var effective: StoredValue {
        guard let extras else { return stored }
        if let argument = extras.argument { return .raw(argument) }
        if let overridden = extras.overridden { return .raw(overridden.bytes) }
        if stored.isPresent { return stored }
        if let fallback = extras.fallback { return .raw(fallback.bytes) }
        if let registered = extras.registered { return .raw(registered) }
        return .absent
    }

    /// Whether the argument domain or an override hides the stored value from reads (a set then stores its value
    /// without caching it as what reads give).
    var isShadowed: Bool {
        guard let extras else { return false }
        return extras.argument != nil || extras.overridden != nil
    }

    /// Which domain or layer ``effective`` comes from: a layer's value with its source, or a domain.
    var origin: Origin {
        if argument != nil { return .argument }
        if let overridden { return .layer(overridden) }
        if stored.isPresent { return .stored }
        if let fallback { return .layer(fallback) }
        if registered != nil { return .registered }
        return .none
    }
}

/// Where a cell's effective value comes from.
enum Origin {
    case argument
    case layer(LayerValue)
    case stored
    case registered
    case none
}

/// A typed cache of one key object's decoded value, valid while ``version`` equals the cell's version.
class AnySlot {
    /// The cell the value was decoded from.
    let cell: Cell
    /// The cell's version when the value was decoded.
    var version: UInt64
    /// The lifetime of the key object whose slot this is (see ``TypedCaches``): `nil` once the key is released.
    /// Weak, and to the key's ``KeyLifetime`` rather than the key, so that a slot never keeps a key alive and the
    /// key itself has no weak reference (an object that has one is retained and released on a slower path).
    weak var keyLifetime: KeyLifetime?

    init(cell: Cell, version: UInt64) {
        self.cell = cell
        self.version = version
    }
}

/// The typed cache for a key of type `Value`. The store only ever looks a slot up by the identity of the key
/// that made it, so the downcast from ``AnySlot`` to the key's own `Value` is always right.
final class Slot<Value>: AnySlot {
    /// The decoded value, or the key's default when nothing is stored or the stored value did not decode.
    var value: Value
    /// Why the stored value did not decode, if it did not.
    var error: DefaultsError?
    /// Whether ``error`` was made for a secret name (it quotes none of the value). An error made before the name
    /// became secret (a key declaring it so, the history marking it) is not served once it is: it is made again.
    let isSecret: Bool

    init(cell: Cell, version: UInt64, value: Value, error: DefaultsError?, isSecret: Bool = false) {
        self.value = value
        self.error = error
        self.isSecret = isSecret
        super.init(cell: cell, version: version)
    }
}
