import CodableDefaults
import Foundation

/// `rekey FILE --encryption-key OLD --new-encryption-key NEW`: encrypts every secret value of the store again under
/// a new key, in one atomic save.
struct RekeyCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "rekey",
        origin: .added(),
        abstract: "Encrypt every secret value again with a new key, in one atomic save.",
        store: [.etcd],
        options: [
            OptionDeclaration(
                name: "new-encryption-key", valueName: "FILE", summary: "The new key (32 random bytes, as hex).")
        ],
        discussion: [
            "Opens the store with the key of --encryption-key OLD (else $CODABLE_DEFAULTS_ENCRYPTION_KEY_FILE), "
                + "decrypts every secret value (the values stored encrypted, and the keys the store's schema or "
                + "history marks secret, which are then encrypted even when stored in clear) and writes them "
                + "encrypted with the key of --new-encryption-key NEW, in one atomic replacement of the file (one "
                + "transaction in etcd): a crash at any point leaves every value readable with OLD or with NEW. A "
                + "value NEW sealed already is kept, so a rotation cut short completes when run again; a value OLD "
                + "does not open exits with 4 and writes nothing. Prints the keys of the secret values, one a line, "
                + "as keys prints them. "
                + "Without OLD (a store whose secrets rest in clear), it encrypts them with NEW.",
            "A key file holds 64 hexadecimal digits (openssl rand -hex 32), their base64, or the 32 bytes, and "
                + "only its owner may read it (chmod 600).",
        ],
        examples: [
            "codable-defaults rekey settings.json --encryption-key old.key --new-encryption-key new.key",
            "openssl rand -hex 32 > new.key && chmod 600 new.key",
        ],
        exitCases: [.notDurable])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The new key's file, as written.
    let newKey: String

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        guard let newKey = arguments.value("new-encryption-key") else {
            throw .usage("missing --new-encryption-key FILE: the key to encrypt the secret values with")
        }
        if newKey.isEmpty { throw .usage("--new-encryption-key FILE is empty") }
        self.newKey = newKey
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store, writes: true)
        let written: [String]
        do {
            written = try opened.defaults.reencryptSecrets(
                with: .file(URL(fileURLWithPath: ArgumentPath.absolute(newKey))))
        } catch {
            throw ToolError(error)
        }
        for key in written { try Output.print(KeyText.line(key) + "\n") }
    }
}
