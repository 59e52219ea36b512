import CodableDefaults

extension ToolError {
    /// The error of a store file that did not open. A key in the file over the length limit makes the file
    /// one the tool cannot read: exit status 4, like invalid JSON (a KEY argument over the limit is refused
    /// earlier, as a usage error).
    init(opening error: DefaultsError) {
        if error.code == .keyTooLong {
            self.init(.badFile, error.description)
        } else {
            self.init(error)
        }
    }
}
