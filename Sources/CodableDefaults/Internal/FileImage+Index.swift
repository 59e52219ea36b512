extension FileImage {
    /// The image of an indexed file's members: byte for byte the image ``init(members:)`` makes of the members
    /// `Document.parse` returns for the same bytes.
    init(index: DocumentIndex) {
        self.init(members: (0..<index.count).lazy.map { (name: index.key(at: $0), value: index.value(at: $0)) })
    }
}
