/// The elements a property list may contain.
enum XMLPlistTag: UInt8 {
    case plist, array, dict, key, string, data, date, real, integer, `true`, `false`

    /// The element name as it appears in a tag.
    var name: StaticString {
        switch self {
        case .plist: "plist"
        case .array: "array"
        case .dict: "dict"
        case .key: "key"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .real: "real"
        case .integer: "integer"
        case .true: "true"
        case .false: "false"
        }
    }

    /// The tag named by the `length` bytes at `p`, or `nil` for any other name (case matters).
    @inline(__always)
    static func identify(_ p: UnsafePointer<UInt8>, length: Int) -> XMLPlistTag? {
        let candidate: XMLPlistTag
        switch (length, p[0]) {
        case (3, UInt8(ascii: "k")): candidate = .key
        case (4, UInt8(ascii: "d")):
            switch p[3] {
            case UInt8(ascii: "t"): candidate = .dict
            case UInt8(ascii: "a"): candidate = .data
            case UInt8(ascii: "e"): candidate = .date
            default: return nil
            }
        case (4, UInt8(ascii: "r")): candidate = .real
        case (4, UInt8(ascii: "t")): candidate = .true
        case (5, UInt8(ascii: "p")): candidate = .plist
        case (5, UInt8(ascii: "a")): candidate = .array
        case (5, UInt8(ascii: "f")): candidate = .false
        case (6, UInt8(ascii: "s")): candidate = .string
        case (7, UInt8(ascii: "i")): candidate = .integer
        default: return nil
        }
        return XMLPlistParser.equal(p, candidate.name) ? candidate : nil
    }
}

/// The parser state: a cursor over UTF-8 bytes plus reusable scratch space.
///
/// `pos` is an index into `base[0 ..< count]`; every read checks it against `count` first.
struct XMLPlistParser {
    let base: UnsafePointer<UInt8>
    let count: Int
    let maximumDepth: Int
    var pos = 0
    /// Decoded text of strings that contain entity references or CDATA sections.
    var scratch: [UInt8] = []

    init(base: UnsafePointer<UInt8>, count: Int, maximumDepth: Int) {
        self.base = base
        self.count = count
        self.maximumDepth = maximumDepth
    }

    // MARK: Errors

    /// An error at byte `offset`, with its line and column.
    @inline(never)
    func error(_ code: PlistError.Code, _ message: String, at offset: Int) -> PlistError {
        PlistError(code, message, at: XMLPlistReader.position(in: UnsafeBufferPointer(start: base, count: count), offset: offset))
    }

    @inline(never)
    func unexpectedEnd(_ what: String, at offset: Int) -> PlistError {
        error(.unexpectedEnd, "unexpected end of input \(what)", at: offset)
    }

    /// A short, printable rendering of the bytes at `offset` for messages.
    @inline(never)
    func snippet(at offset: Int, upTo limit: Int = 20) -> String {
        var end = offset
        while end < count, end - offset < limit, base[end] != UInt8(ascii: ">"),
              base[end] != UInt8(ascii: "<") || end == offset {
            end += 1
        }
        return String(decoding: UnsafeBufferPointer(start: base + offset, count: end - offset), as: UTF8.self)
            .replacingNonPrintable()
    }

    // MARK: Bytes

    /// Whether the bytes at `p` are exactly `literal`. The caller checked that they exist.
    @inline(__always)
    static func equal(_ p: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
        let q = literal.utf8Start
        for i in 0 ..< literal.utf8CodeUnitCount where p[i] != q[i] { return false }
        return true
    }

    /// XML whitespace as CoreFoundation's parser knows it: space, tab, LF, CR.
    @inline(__always)
    static func isSpace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while pos < count, Self.isSpace(base[pos]) { pos += 1 }
    }

    // MARK: Prolog

    /// Skips what may precede the root element: whitespace, the XML declaration and other
    /// processing instructions, comments and a DOCTYPE. Leaves `pos` just past the root's `<`.
    mutating func skipProlog() throws(PlistError) {
        while true {
            skipWhitespace()
            guard pos + 1 < count else { throw error(.unknownFormat, "no XML content found", at: pos) }
            guard base[pos] == UInt8(ascii: "<") else {
                throw error(.unknownFormat, "not an XML property list: unexpected '\(snippet(at: pos, upTo: 1))'", at: pos)
            }
            let open = pos
            pos += 1
            switch base[pos] {
            case UInt8(ascii: "!"):
                pos += 1
                if pos + 1 < count, base[pos] == UInt8(ascii: "-"), base[pos + 1] == UInt8(ascii: "-") {
                    // CoreFoundation steps one byte past `<!--` here (unlike inside elements).
                    pos = min(pos + 3, count)
                    try skipComment(openedAt: open)
                } else {
                    try skipDoctype(openedAt: open)
                }
            case UInt8(ascii: "?"):
                pos += 1
                try skipProcessingInstruction(openedAt: open)
            default:
                return
            }
        }
    }

    /// Skips to just past `-->`.
    mutating func skipComment(openedAt open: Int) throws(PlistError) {
        while pos + 2 < count {
            if base[pos] == UInt8(ascii: "-"), base[pos + 1] == UInt8(ascii: "-"), base[pos + 2] == UInt8(ascii: ">") {
                pos += 3
                return
            }
            pos += 1
        }
        throw error(.unexpectedEnd, "unterminated comment", at: open)
    }

    /// Skips to just past `?>`.
    mutating func skipProcessingInstruction(openedAt open: Int) throws(PlistError) {
        while pos + 1 < count {
            if base[pos] == UInt8(ascii: "?"), base[pos + 1] == UInt8(ascii: ">") {
                pos += 2
                return
            }
            pos += 1
        }
        throw error(.unexpectedEnd, "unterminated processing instruction", at: open)
    }

    /// Skips `<!DOCTYPE ...>`; `pos` is just past `<!`. An internal subset (`[...]`) is refused,
    /// as CoreFoundation refuses it.
    mutating func skipDoctype(openedAt open: Int) throws(PlistError) {
        guard count - pos >= 7, Self.equal(base + pos, "DOCTYPE") else {
            throw error(.syntax, "malformed markup declaration '<!\(snippet(at: pos))'", at: open)
        }
        pos += 7
        while pos < count {
            switch base[pos] {
            case UInt8(ascii: ">"):
                pos += 1
                return
            case UInt8(ascii: "["):
                throw error(.syntax, "DOCTYPE with an internal subset is not supported", at: pos)
            default:
                pos += 1
            }
        }
        throw error(.unexpectedEnd, "unterminated DOCTYPE", at: open)
    }

    // MARK: Content and tags

    /// What comes next inside an element.
    enum Content {
        /// An element starts; `pos` is just past its `<`.
        case element
        /// An end tag starts; `pos` is at its `<`.
        case endTag
    }

    /// Skips whitespace, comments and processing instructions between elements. Text is an error.
    @inline(__always)
    mutating func nextContent() throws(PlistError) -> Content {
        while true {
            skipWhitespace()
            guard pos < count else { throw unexpectedEnd("inside an element", at: pos) }
            guard base[pos] == UInt8(ascii: "<") else {
                throw error(.syntax, "unexpected text '\(snippet(at: pos))' between elements", at: pos)
            }
            let open = pos
            pos += 1
            guard pos < count else { throw unexpectedEnd("after '<'", at: open) }
            switch base[pos] {
            case UInt8(ascii: "/"):
                pos = open
                return .endTag
            case UInt8(ascii: "?"):
                // CoreFoundation looks for `?>` from the `?` itself here, so `<?>` is a complete PI.
                try skipProcessingInstruction(openedAt: open)
            case UInt8(ascii: "!"):
                guard pos + 2 < count else { throw unexpectedEnd("after '<!'", at: open) }
                guard base[pos + 1] == UInt8(ascii: "-"), base[pos + 2] == UInt8(ascii: "-") else {
                    throw error(.syntax, "unexpected '<!\(snippet(at: pos + 1))' (only comments may appear here)", at: open)
                }
                pos += 3
                try skipComment(openedAt: open)
            default:
                return .element
            }
        }
    }

    /// Reads a start tag whose `<` is just before `pos`, up to and past its `>`. Attributes are
    /// ignored; a `/` right before the `>` makes the element empty.
    @inline(__always)
    mutating func readStartTag() throws(PlistError) -> (tag: XMLPlistTag, isEmpty: Bool) {
        let nameStart = pos
        var nameEnd = -1
        while pos < count {
            let c = base[pos]
            if c == UInt8(ascii: ">") { break }
            if nameEnd < 0, Self.isSpace(c) { nameEnd = pos }
            pos += 1
        }
        guard pos < count else { throw unexpectedEnd("in a tag", at: nameStart - 1) }
        let isEmpty = base[pos - 1] == UInt8(ascii: "/")
        if nameEnd < 0 { nameEnd = isEmpty ? pos - 1 : pos }
        pos += 1
        let length = nameEnd - nameStart
        guard length > 0 else { throw error(.syntax, "malformed tag", at: nameStart - 1) }
        guard let tag = XMLPlistTag.identify(base + nameStart, length: length) else {
            let name = String(decoding: UnsafeBufferPointer(start: base + nameStart, count: length), as: UTF8.self)
            throw error(.unknownElement, "unknown element <\(name.replacingNonPrintable())>", at: nameStart - 1)
        }
        return (tag, isEmpty)
    }

    /// Reads `</tag>` (whitespace allowed before the `>`) at `pos`.
    @inline(__always)
    mutating func expectEndTag(_ tag: XMLPlistTag) throws(PlistError) {
        let name = tag.name
        let length = name.utf8CodeUnitCount
        guard count - pos >= length + 3 else { throw unexpectedEnd("looking for </\(tag.name)>", at: pos) }
        guard base[pos] == UInt8(ascii: "<"), base[pos + 1] == UInt8(ascii: "/") else {
            throw error(.syntax, "expected </\(tag.name)>, found '\(snippet(at: pos))'", at: pos)
        }
        let open = pos
        pos += 2
        guard Self.equal(base + pos, name) else {
            throw error(.syntax, "end tag '\(snippet(at: open))>' does not match <\(tag.name)>", at: open)
        }
        pos += length
        skipWhitespace()
        guard pos < count else { throw unexpectedEnd("looking for </\(tag.name)>", at: pos) }
        guard base[pos] == UInt8(ascii: ">") else {
            throw error(.syntax, "end tag '\(snippet(at: open))' does not match <\(tag.name)>", at: open)
        }
        pos += 1
    }
}

extension String {
    /// The string with control characters shown as `\u{..}`, for error messages.
    func replacingNonPrintable() -> String {
        var out = ""
        for s in unicodeScalars {
            if s.value < 0x20 || s.value == 0x7F { out += "\\u{\(String(s.value, radix: 16))}" } else { out.unicodeScalars.append(s) }
        }
        return out
    }
}
