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
    /// Decoded `<data>` bytes (kept apart from `scratch` so neither shrinks the other).
    var decoded: [UInt8] = []
    /// Strings already made, to share instead of making them again.
    var strings: XMLStringCache

    init(base: UnsafePointer<UInt8>, count: Int, maximumDepth: Int) {
        self.base = base
        self.count = count
        self.maximumDepth = maximumDepth
        strings = XMLStringCache(inputSize: count)
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
        pos = skipSpace(from: pos)
    }

    /// The first index at or after `p` that is not XML whitespace (or `count`).
    @inline(__always)
    func skipSpace(from start: Int) -> Int {
        var p = start
        while p < count, Self.isSpace(base[p]) { p += 1 }
        return p
    }

    /// The eight bytes at `p` as a little-endian word. The caller checked that they exist.
    @inline(__always)
    func word(at p: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self))
    }

    /// Up to eight bytes of `literal` as a little-endian word (constant-folded for literals).
    @inline(__always)
    static func pack(_ literal: StaticString) -> UInt64 {
        var v: UInt64 = 0
        let p = literal.utf8Start
        for i in 0 ..< min(literal.utf8CodeUnitCount, 8) { v |= UInt64(p[i]) << (8 * UInt64(i)) }
        return v
    }

    /// Masks for the low 4...7 bytes of a word.
    static let mask4: UInt64 = 0xFFFF_FFFF, mask5: UInt64 = 0xFF_FFFF_FFFF
    static let mask6: UInt64 = 0xFFFF_FFFF_FFFF, mask7: UInt64 = 0xFF_FFFF_FFFF_FFFF

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

    /// The tag, emptiness and length of `name>` / `name/>` at the start of `w`, or `nil` for
    /// anything else (which the general path then reads).
    @inline(__always)
    static func plainStartTag(_ w: UInt64) -> (XMLPlistTag, Bool, Int)? {
        switch UInt8(truncatingIfNeeded: w) {
        case UInt8(ascii: "k"):
            if w & mask4 == pack("key>") { return (.key, false, 4) }
            if w & mask5 == pack("key/>") { return (.key, true, 5) }
        case UInt8(ascii: "s"):
            if w & mask7 == pack("string>") { return (.string, false, 7) }
            if w == pack("string/>") { return (.string, true, 8) }
        case UInt8(ascii: "i"):
            if w == pack("integer>") { return (.integer, false, 8) }
        case UInt8(ascii: "r"):
            if w & mask5 == pack("real>") { return (.real, false, 5) }
        case UInt8(ascii: "t"):
            if w & mask6 == pack("true/>") { return (.true, true, 6) }
            if w & mask5 == pack("true>") { return (.true, false, 5) }
        case UInt8(ascii: "f"):
            if w & mask7 == pack("false/>") { return (.false, true, 7) }
            if w & mask6 == pack("false>") { return (.false, false, 6) }
        case UInt8(ascii: "d"):
            if w & mask5 == pack("dict>") { return (.dict, false, 5) }
            if w & mask5 == pack("date>") { return (.date, false, 5) }
            if w & mask5 == pack("data>") { return (.data, false, 5) }
            if w & mask6 == pack("dict/>") { return (.dict, true, 6) }
        case UInt8(ascii: "a"):
            if w & mask6 == pack("array>") { return (.array, false, 6) }
            if w & mask7 == pack("array/>") { return (.array, true, 7) }
        default:
            break
        }
        return nil
    }

    /// Any start tag, as CoreFoundation reads it: the name ends at the first space or at `>`
    /// (less a `/` right before it); everything else up to `>` is ignored.
    @inline(never)
    mutating func readStartTagInGeneral() throws(PlistError) -> (tag: XMLPlistTag, isEmpty: Bool) {
        let nameStart = pos
        var p = pos
        var nameEnd = -1
        while p < count {
            let c = base[p]
            if c == UInt8(ascii: ">") { break }
            if nameEnd < 0, Self.isSpace(c) { nameEnd = p }
            p += 1
        }
        guard p < count else { throw unexpectedEnd("in a tag", at: nameStart - 1) }
        let isEmpty = base[p - 1] == UInt8(ascii: "/")
        if nameEnd < 0 { nameEnd = isEmpty ? p - 1 : p }
        pos = p + 1
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
        let length = plainEndTag(tag, at: pos)
        if length > 0 {
            pos += length
        } else {
            try expectEndTagInGeneral(tag)
        }
    }

    /// The length of exactly `</name>` at `p`, compared eight bytes at a time, or 0 when the
    /// bytes there are anything else (which the general path then judges).
    @inline(__always)
    func plainEndTag(_ tag: XMLPlistTag, at p: Int) -> Int {
        guard count - p >= 10 else { return 0 }
        let w = word(at: p)
        switch tag {
        case .key: return w & Self.mask6 == Self.pack("</key>") ? 6 : 0
        case .string: return w == Self.pack("</string") && base[p + 8] == UInt8(ascii: ">") ? 9 : 0
        case .integer:
            return w == Self.pack("</intege") && base[p + 8] == UInt8(ascii: "r") && base[p + 9] == UInt8(ascii: ">") ? 10 : 0
        case .real: return w & Self.mask7 == Self.pack("</real>") ? 7 : 0
        case .date: return w & Self.mask7 == Self.pack("</date>") ? 7 : 0
        case .data: return w & Self.mask7 == Self.pack("</data>") ? 7 : 0
        case .dict: return w & Self.mask7 == Self.pack("</dict>") ? 7 : 0
        case .array: return w == Self.pack("</array>") ? 8 : 0
        default: return 0
        }
    }

    @inline(never)
    mutating func expectEndTagInGeneral(_ tag: XMLPlistTag) throws(PlistError) {
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
