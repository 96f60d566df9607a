/// The two property-list file formats.
public enum PlistFormat: String, Sendable, Hashable, CaseIterable {
    /// Apple's XML format (`<?xml ...?><plist>`), human-readable and editable.
    case xml
    /// The compact binary format (`bplist00`).
    case binary

    /// The format of `bytes` judged from their first bytes: `binary` for `bplist`, else `xml`.
    ///
    /// - Parameter bytes: the start of a file; 6 bytes are enough.
    public static func detect(_ bytes: some Collection<UInt8>) -> PlistFormat {
        bytes.starts(with: Array("bplist".utf8)) ? .binary : .xml
    }
}
