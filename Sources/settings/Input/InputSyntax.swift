import SettingsPlist

/// The syntaxes the tool reads, told apart by their first bytes.
enum InputSyntax: Equatable {
    /// An XML property list.
    case xml
    /// A binary property list (`bplist00`).
    case binary
    /// Canonical typed JSON (`{"dict": [...]}`), as `print --typed-json` writes it.
    case typedJSON
    /// Plain JSON, as `plutil -convert json` writes it.
    case json
    /// OpenStep text, as `read` (and `defaults read`) prints it.
    case openStep

    /// Whether the tool can write a file back in this syntax when editing it in place.
    var isPropertyListFile: Bool { self == .xml || self == .binary }

    var name: String {
        switch self {
        case .xml: "an XML property list"
        case .binary: "a binary property list"
        case .typedJSON: "typed JSON"
        case .json: "JSON"
        case .openStep: "OpenStep text"
        }
    }

    /// The syntax of `bytes`: binary for `bplist`; XML for `<?`, `<!` or `<plist`; JSON for `[`
    /// or an object whose first key is followed by `:`; typed JSON when that key names a type;
    /// OpenStep text otherwise (`{ key = value; }`, `( a, b )`, `<0fbd>`, a bare word).
    static func detect(_ bytes: [UInt8]) -> InputSyntax {
        if bytes.starts(with: Array("bplist".utf8)) { return .binary }
        // UTF-16 and UTF-32 text is XML (the XML reader handles its encodings).
        if let first = bytes.first, first == 0xFE || first == 0xFF || first == 0x00 { return .xml }
        if bytes.count > 1, bytes[1] == 0x00 { return .xml }
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func skipSpace() { while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 } }
        skipSpace()
        guard i < bytes.count else { return .xml }
        switch bytes[i] {
        case UInt8(ascii: "<"):
            let next = i + 1 < bytes.count ? bytes[i + 1] : 0
            if next == UInt8(ascii: "?") || next == UInt8(ascii: "!") || bytes[(i + 1)...].starts(with: Array("plist".utf8)) { return .xml }
            let isHexOrSpace = next == UInt8(ascii: ">") || [0x20, 0x09, 0x0A, 0x0D].contains(next)
                || (next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9")) || ((next | 0x20) >= UInt8(ascii: "a") && (next | 0x20) <= UInt8(ascii: "f"))
            return isHexOrSpace ? .openStep : .xml
        case UInt8(ascii: "["):
            return .json
        case UInt8(ascii: "{"):
            i += 1
            skipSpace()
            guard i < bytes.count else { return .openStep }
            if bytes[i] == UInt8(ascii: "}") { return .json }
            guard bytes[i] == UInt8(ascii: "\"") else { return .openStep }
            let keyStart = i + 1
            i += 1
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
            let key = String(decoding: bytes[keyStart..<min(i, bytes.count)], as: UTF8.self)
            i += 1
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return .openStep }
            return typedTags.contains(key) ? .typedJSON : .json
        default:
            return .openStep
        }
    }

    static let typedTags: Set<String> = ["dict", "array", "string", "int", "real", "bool", "date", "data", "uid"]
}
