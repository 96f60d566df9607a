/// Character data: `<string>` / `<key>` / `<real>` content with entity references and CDATA.
extension XMLPlistParser {
    /// Where a piece of character data ended up.
    struct Text {
        /// The first byte of the content, for error positions.
        var start: Int
        /// The raw bytes `base[start ..< end]` when there were no escapes; otherwise `nil` and the
        /// decoded bytes are in `scratch`.
        var rawEnd: Int?
    }

    /// Reads character data up to the next tag, resolving the five predefined entities,
    /// character references and CDATA sections. XML end-of-line handling is not applied: CR and
    /// CRLF stay as they are, as in CoreFoundation. A comment inside the text is an error.
    @inline(__always)
    mutating func scanText() throws(PlistError) -> Text {
        let start = pos
        scanPlainText()
        // Fast path: most strings end at their end tag with no escapes.
        if pos >= count || base[pos] == UInt8(ascii: "<") && (pos + 1 >= count || base[pos + 1] != UInt8(ascii: "!")) {
            return Text(start: start, rawEnd: pos)
        }
        return try scanEscapedText(from: start)
    }

    /// Advances `pos` to the next `<` or `&` (or the end).
    @inline(__always)
    mutating func scanPlainText() {
        pos = plainTextEnd(from: pos)
    }

    /// The index of the first `<` or `&` at or after `start` (or `count`), found eight bytes at a
    /// time where possible.
    @inline(__always)
    func plainTextEnd(from start: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let lt = ones &* 0x3C, amp = ones &* 0x26
        var p = start
        while p + 8 <= count {
            let w = word(at: p)
            let a = w ^ lt, b = w ^ amp
            // A byte is zero in `a` or `b` exactly where the word holds '<' or '&'; the lowest
            // flagged byte is always a true match.
            let hits = ((a &- ones) & ~a | (b &- ones) & ~b) & highs
            if hits != 0 { return p + hits.trailingZeroBitCount >> 3 }
            p += 8
        }
        while p < count {
            let c = base[p]
            if c == UInt8(ascii: "<") || c == UInt8(ascii: "&") { return p }
            p += 1
        }
        return p
    }

    /// The index of the first `<` at or after `start` (or `count`), eight bytes at a time.
    @inline(__always)
    func tagStart(from start: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let lt = ones &* 0x3C
        var p = start
        while p + 8 <= count {
            let a = word(at: p) ^ lt
            let hits = (a &- ones) & ~a & highs
            if hits != 0 { return p + hits.trailingZeroBitCount >> 3 }
            p += 8
        }
        while p < count, base[p] != UInt8(ascii: "<") { p += 1 }
        return p
    }

    /// The slow path of ``scanText()``: builds the decoded text in `scratch`.
    @inline(never)
    mutating func scanEscapedText(from start: Int) throws(PlistError) -> Text {
        scratch.removeAll(keepingCapacity: true)
        var mark = start
        while pos < count {
            let c = base[pos]
            if c == UInt8(ascii: "<") {
                if pos + 1 >= count || base[pos + 1] != UInt8(ascii: "!") { break }
                appendRaw(from: mark)
                try appendCDATA()
            } else if c == UInt8(ascii: "&") {
                appendRaw(from: mark)
                try appendEntity()
            } else {
                scanPlainText()
                continue
            }
            mark = pos
        }
        appendRaw(from: mark)
        return Text(start: start, rawEnd: nil)
    }

    @inline(__always)
    private mutating func appendRaw(from mark: Int) {
        if pos > mark { scratch.append(contentsOf: UnsafeBufferPointer(start: base + mark, count: pos - mark)) }
    }

    /// Appends the content of `<![CDATA[ ... ]]>` at `pos`.
    private mutating func appendCDATA() throws(PlistError) {
        let open = pos
        guard count - pos >= 9 else { throw unexpectedEnd("in '<!' inside text", at: open) }
        guard Self.equal(base + pos, "<![CDATA[") else {
            throw error(.syntax, "unexpected '\(snippet(at: pos))' inside text (only CDATA sections may start with '<!' here)", at: open)
        }
        pos += 9
        let contentStart = pos
        while pos + 2 < count {
            if base[pos] == UInt8(ascii: "]"), base[pos + 1] == UInt8(ascii: "]"), base[pos + 2] == UInt8(ascii: ">") {
                scratch.append(contentsOf: UnsafeBufferPointer(start: base + contentStart, count: pos - contentStart))
                pos += 3
                return
            }
            pos += 1
        }
        throw error(.unexpectedEnd, "unterminated CDATA section", at: open)
    }

    /// Appends the character of the entity or character reference at `pos` (an `&`).
    ///
    /// Like CoreFoundation: only `lt gt amp apos quot`, `&#DDD;` and `&#xHHH;` (lowercase `x`),
    /// at most eight digits, any Unicode scalar value including U+0000.
    private mutating func appendEntity() throws(PlistError) {
        let amp = pos
        pos += 1
        let left = count - pos
        guard left >= 1 else { throw unexpectedEnd("in an entity reference", at: amp) }
        func named(_ name: StaticString, _ char: UInt8) -> Bool {
            let n = name.utf8CodeUnitCount
            guard left >= n, Self.equal(base + pos, name) else { return false }
            scratch.append(char)
            pos += n
            return true
        }
        switch base[pos] {
        case UInt8(ascii: "l"): if named("lt;", UInt8(ascii: "<")) { return }
        case UInt8(ascii: "g"): if named("gt;", UInt8(ascii: ">")) { return }
        case UInt8(ascii: "a"):
            guard left >= 4 else { throw unexpectedEnd("in an entity reference", at: amp) }
            if named("amp;", UInt8(ascii: "&")) || named("apos;", UInt8(ascii: "'")) { return }
        case UInt8(ascii: "q"): if named("quot;", UInt8(ascii: "\"")) { return }
        case UInt8(ascii: "#"):
            guard left >= 4 else { throw unexpectedEnd("in a character reference", at: amp) }
            try appendCharacterReference(at: amp)
            return
        default: break
        }
        throw error(.invalidValue, "unknown entity '\(snippet(at: amp, upTo: 12))'", at: amp)
    }

    /// `&#...;` with `pos` at the `#`.
    private mutating func appendCharacterReference(at amp: Int) throws(PlistError) {
        pos += 1
        let hex = base[pos] == UInt8(ascii: "x")
        if hex { pos += 1 }
        var value: UInt32 = 0
        var length = 0
        while pos < count {
            let c = base[pos]
            pos += 1
            length += 1
            if c == UInt8(ascii: ";") {
                guard let scalar = Unicode.Scalar(value) else {
                    throw error(.invalidValue, "character reference to an invalid code point 0x\(String(value, radix: 16))", at: amp)
                }
                XMLSourceEncoding.appendUTF8(scalar.value, to: &scratch)
                return
            }
            guard length <= 8 else { throw error(.invalidValue, "character reference too long", at: amp) }
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = UInt32(c) - 0x30
            case UInt8(ascii: "a") ... UInt8(ascii: "f") where hex: digit = UInt32(c) - 0x57
            case UInt8(ascii: "A") ... UInt8(ascii: "F") where hex: digit = UInt32(c) - 0x37
            default: throw error(.invalidValue, "unexpected character in character reference", at: pos - 1)
            }
            value = (hex ? value &<< 4 : value &* 10) &+ digit
        }
        throw unexpectedEnd("in a character reference", at: amp)
    }

    // MARK: Strings

    /// The text as a `String` (shared with an earlier equal one when possible) and the hash of
    /// its bytes (0 when `hashed` is false and the string is too long to cache).
    ///
    /// - Throws: ``PlistError/Code/invalidValue`` when the text is not UTF-8.
    @inline(__always)
    mutating func makeString(_ text: Text, hashed: Bool) throws(PlistError) -> (String, UInt64) {
        if let end = text.rawEnd {
            return try makeString(UnsafeBufferPointer(start: base + text.start, count: end - text.start), at: text.start,
                                  hashed: hashed, overread: text.start + 8 <= count)
        }
        let decoded = scratch
        return try decoded.withUnsafeBufferPointer { (bytes) throws(PlistError) -> (String, UInt64) in
            try makeString(bytes, at: text.start, hashed: hashed, overread: false)
        }
    }

    @inline(__always)
    mutating func makeString(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, hashed: Bool,
                             overread: Bool) throws(PlistError) -> (String, UInt64) {
        if bytes.count <= XMLStringCache.maximumLength {
            let head = XMLStringCache.head(bytes, overread: overread)
            let hash = XMLStringCache.hash(bytes, head: head)
            if let cached = strings.lookup(bytes, head: head, hash: hash) { return (cached, hash) }
            guard let s = Self.string(bytes) else { throw error(.invalidValue, "string is not valid UTF-8", at: offset) }
            strings.insert(s, bytes: bytes, head: head, hash: hash)
            return (s, hash)
        }
        guard let s = Self.string(bytes) else { throw error(.invalidValue, "string is not valid UTF-8", at: offset) }
        return (s, hashed ? XMLStringCache.hash(bytes) : 0)
    }

    /// The bytes as a `String`, or `nil` when they are not UTF-8.
    ///
    /// `String(decoding:as:)` replaces ill-formed sequences with U+FFFD, so the result equals the
    /// input exactly when the input is well-formed; the check is skipped for ASCII.
    @inline(__always)
    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var s = String(decoding: bytes, as: UTF8.self)
        if !isASCII(bytes), !s.withUTF8({ bytesEqual($0, bytes) }) { return nil }
        return s
    }

    /// Whether every byte is below 0x80.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = bytes.baseAddress else { return true }
        let n = bytes.count
        var i = 0
        var acc: UInt64 = 0
        while i + 8 <= n {
            acc |= UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
            i += 8
        }
        while i < n {
            acc |= UInt64(p[i])
            i += 1
        }
        return acc & 0x8080_8080_8080_8080 == 0
    }

    /// Whether two byte buffers hold the same bytes.
    @inline(__always)
    static func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let p = a.baseAddress, let q = b.baseAddress else { return true }
        let n = a.count
        var i = 0
        while i + 8 <= n {
            if UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(q + i).loadUnaligned(as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < n {
            if p[i] != q[i] { return false }
            i += 1
        }
        return true
    }

    /// Reads the content of a non-empty `<string>` or `<key>` and its end tag.
    @inline(__always)
    mutating func readString(_ tag: XMLPlistTag) throws(PlistError) -> String {
        let text = try scanText()
        let (s, _) = try makeString(text, hashed: false)
        try expectEndTag(tag)
        return s
    }
}
