/// `--dry-run`, the option of every command that writes the store: the command does everything up to the
/// write, prints the lines ``DiffText`` makes for what it would change, and writes nothing.
///
/// A command that declares it (``StoreGroups/dryRun``) takes it with its store (``StoreArguments/isDryRun``):
/// ``Tool/open(_:writes:)`` keeps the stored members as they were opened (``OpenedStore/membersAsOpened``),
/// ``Tool/save(_:)`` prints the difference and discards the changes instead of saving, and ``Tool/update(_:keys:asEncryptedText:_:)``
/// computes the new values from the current ones in memory instead of taking the file's lock.
enum DryRun {
    /// The option, as each command that writes lists it.
    static let option = OptionDeclaration(
        name: "dry-run", valueName: nil,
        summary: "Print what would change (as 'diff' prints it) and write nothing.")

    /// The paragraph on `--dry-run`, in the help of each command that takes it.
    static let helpParagraph =
        "With --dry-run, the command does everything but the write: it prints a line per key it would change, as "
        + "'diff' prints them ('+ KEY<TAB>NEW', '- KEY<TAB>OLD', '~ KEY<TAB>OLD → NEW'; nothing when nothing "
        + "would change, and a value only spelled otherwise, such as 1.0 for 1, is no change, though a real run "
        + "writes the new spelling), writes and creates nothing where the store is (no store file, lock file or "
        + "directory) and exits with 0, "
        + "or with the status the real run would exit with (a usage error, a key not found, a value of another "
        + "type). Only what the command itself changes is listed, never what other processes saved."

    /// The sentence of the commands whose real run reads the current value under the file's lock: `subject`
    /// ("A dry run", "A dry run of -array-add") reads it without the lock.
    static func unlockedSentence(of subject: String) -> String {
        subject + " reads the current value without the file's lock: another process may change it before a real "
            + "run, which reads it again under the lock, so the real run may write another value than the dry run "
            + "printed."
    }
}
