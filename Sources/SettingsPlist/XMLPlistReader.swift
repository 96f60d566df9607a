/// Reads XML property lists. (Stub: being written.)
enum XMLPlistReader {
    static func read(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions) throws(PlistError) -> PlistValue {
        throw PlistError(.syntax, "XML reader not implemented")
    }
}
