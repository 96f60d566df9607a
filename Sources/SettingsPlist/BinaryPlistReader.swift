/// Reads binary property lists. (Stub: being written.)
enum BinaryPlistReader {
    static func read(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions) throws(PlistError) -> PlistValue {
        throw PlistError(.corruptBinary, "binary reader not implemented")
    }
}
