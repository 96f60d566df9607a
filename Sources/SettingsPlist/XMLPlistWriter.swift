/// Writes XML property lists. (Stub: being written.)
enum XMLPlistWriter {
    static func write(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        throw PlistError(.unencodable, "XML writer not implemented")
    }
}
