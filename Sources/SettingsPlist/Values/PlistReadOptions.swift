/// Limits applied while reading, so hostile input stays bounded.
public struct PlistReadOptions: Sendable, Hashable {
    /// How deeply arrays and dictionaries may nest; deeper input is a ``PlistError/Code/tooDeep`` error.
    /// The default, 512, is CoreFoundation's limit and far beyond any real file.
    public var maximumDepth: Int
    /// Data objects of a binary plist longer than this are read as empty, without touching their
    /// bytes (`nil`: all are read). For listings that need only a file's small values, read from
    /// a mapped file (`PlistHistory`'s list of generations, in SettingsFiles).
    package var skippingDataLongerThan: Int?
    /// Of a binary plist whose top object is a dictionary, only the values of these keys are
    /// read; the others are left out without being decoded (`nil`: all are read). For a look at
    /// a large file's few small marks (the provenance log's `lineage` and `through`, in
    /// SettingsFiles). Other formats are read whole.
    package var onlyTopLevelKeys: Set<String>?

    /// Creates reading options.
    ///
    /// - Parameter maximumDepth: the nesting limit (default 512).
    public init(maximumDepth: Int = 512) {
        self.maximumDepth = maximumDepth
    }
}
