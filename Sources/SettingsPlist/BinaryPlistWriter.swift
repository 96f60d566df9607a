/// Writes binary property lists. (Stub: being written.)
enum BinaryPlistWriter {
    static func write(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        throw PlistError(.unencodable, "binary writer not implemented")
    }
}
