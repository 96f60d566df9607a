/// Limits applied while reading, so hostile input stays bounded.
public struct PlistReadOptions: Sendable, Hashable {
    /// How deeply arrays and dictionaries may nest; deeper input is a ``PlistError/Code/tooDeep`` error.
    /// The default, 512, is CoreFoundation's limit and far beyond any real file.
    public var maximumDepth: Int

    /// Creates reading options.
    ///
    /// - Parameter maximumDepth: the nesting limit (default 512).
    public init(maximumDepth: Int = 512) {
        self.maximumDepth = maximumDepth
    }
}
