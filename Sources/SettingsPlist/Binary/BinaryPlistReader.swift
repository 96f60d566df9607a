/// Reads binary property lists (`bplist00`), with CoreFoundation's validation rules.
///
/// The file is validated from the outside in: header, then the 32-byte trailer against the file
/// size, then every entry of the offset table, all before anything is allocated in proportion to
/// the counts the file claims. Objects are then decoded on demand from the top object down; every
/// length and count is checked against the bytes that remain before it is used.
///
/// One file per job: `BinaryPlistLayout` (header, trailer, offset table), `BinaryPlistDecoder`
/// (objects, sharing, the expansion limit), `BinaryPlistKeyTable` (key numbering and the hash
/// slots the writer shares) and `BinaryPlistText` (ASCII and UTF-16 strings).
enum BinaryPlistReader {
    static func read(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions) throws(PlistError) -> PlistValue {
        try read(buffer, options: options, expansionLimit: BinaryPlistDecoder.expansionLimit(forFileSize: buffer.count))
    }

    /// Reads with an explicit limit on the expanded size (tests use small ones).
    static func read(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions, expansionLimit: Int) throws(PlistError) -> PlistValue {
        let layout = try BinaryPlistLayout(buffer)
        var decoder = BinaryPlistDecoder(buffer, layout: layout, maximumDepth: options.maximumDepth, expansionLimit: expansionLimit)
        decoder.skippingDataLongerThan = options.skippingDataLongerThan
        decoder.onlyTopLevelKeys = options.onlyTopLevelKeys
        return try decoder.decodeTop()
    }
}
