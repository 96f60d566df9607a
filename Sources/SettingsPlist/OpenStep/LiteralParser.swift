#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parser's state. Open containers are frames; their finished children wait on the shared
/// `values` and `keys` stacks until the container closes, so each value is moved once.
package struct LiteralParser {
    enum Kind {
        case array
        case dictionary
        /// The brace-less dictionary of a `.strings`-style document: ends at the end of input.
        case stringsFile
    }

    struct Frame {
        let kind: Kind
        /// Offset of the opening bracket (0 for the strings-file form).
        let open: Int
        let valueStart: Int
        let keyStart: Int
    }

    let bytes: UnsafeBufferPointer<UInt8>
    let end: Int
    let maximumDepth: Int
    let inferTypes: Bool
    var p = 0
    var frames: [Frame] = []
    var values: [PlistValue] = []
    var keys: [String] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, inferTypes: Bool) {
        self.bytes = bytes
        self.end = bytes.count
        self.maximumDepth = maximumDepth
        self.inferTypes = inferTypes
    }

    // MARK: Document

    mutating func parseDocument() throws(PlistError) -> PlistValue {
        try skipSpace()
        guard p < end else { return .dictionary(PlistDictionary()) }
        let start = p
        let rootIsString = Self.isQuote(bytes[p]) || Self.isUnquoted(bytes[p])
        let value = try parseValue()
        try skipSpace()
        guard p < end else { return value }
        guard rootIsString else {
            throw error(.syntax, "unexpected \(describe(p)) after the value", at: p)
        }
        // A string followed by more text: read the whole text again as `key = value;` entries.
        p = start
        frames.append(Frame(kind: .stringsFile, open: start, valueStart: 0, keyStart: 0))
        if let whole = try continueDictionary() { return whole }
        return try parseValue()
    }

    /// Reads one complete value, including everything nested in it, and closes the frames that
    /// were open when it started as they complete (the strings-file frame included).
    mutating func parseValue() throws(PlistError) -> PlistValue {
        var value = try beginValue()
        while let frame = frames.last {
            values.append(value)
            let closed: PlistValue?
            switch frame.kind {
            case .array:
                closed = try continueArray()
            case .dictionary, .stringsFile:
                try expectEntryEnd()
                closed = try continueDictionary()
            }
            if let closed { value = closed } else { value = try beginValue() }
        }
        return value
    }

    /// Reads a value: a scalar is returned; an opened container is pushed as a frame and reading
    /// goes on with its first child until some value completes.
    mutating func beginValue() throws(PlistError) -> PlistValue {
        while true {
            try skipSpace()
            guard p < end else { throw unterminated() }
            let c = bytes[p]
            switch c {
            case UInt8(ascii: "("):
                try checkDepth()
                let open = p
                p += 1
                try skipSpace()
                if p < end, bytes[p] == UInt8(ascii: ")") {
                    p += 1
                    return .array([])
                }
                frames.append(Frame(kind: .array, open: open, valueStart: values.count, keyStart: keys.count))
            case UInt8(ascii: "{"):
                try checkDepth()
                frames.append(Frame(kind: .dictionary, open: p, valueStart: values.count, keyStart: keys.count))
                p += 1
                if let closed = try continueDictionary() { return closed }
            case UInt8(ascii: "<"):
                return .data(try readData())
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                return .string(try readQuoted())
            default:
                guard Self.isUnquoted(c) else {
                    throw error(.syntax, "unexpected \(describe(p))\(expectationInFrame)", at: p)
                }
                let word = readWord()
                if inferTypes, let typed = LiteralScalars.infer(word) { return typed }
                return .string(Self.string(word))
            }
        }
    }

    /// After an array element: `,` (maybe then `)`) or `)`. Returns the array when it closes.
    mutating func continueArray() throws(PlistError) -> PlistValue? {
        try skipSpace()
        guard p < end else { throw unterminated() }
        switch bytes[p] {
        case UInt8(ascii: ","):
            p += 1
            try skipSpace()
            guard p < end else { throw unterminated() }
            guard bytes[p] == UInt8(ascii: ")") else { return nil }
            p += 1
            return closeArray()
        case UInt8(ascii: ")"):
            p += 1
            return closeArray()
        default:
            throw error(.syntax, "expected ',' or ')' after an array element, found \(describe(p))", at: p)
        }
    }

    /// Reads dictionary entries until a value is needed (after `=`: returns `nil`) or the
    /// dictionary closes (returns it). `key;` entries are complete on their own.
    mutating func continueDictionary() throws(PlistError) -> PlistValue? {
        guard let frame = frames.last else { return nil }
        while true {
            try skipSpace()
            guard p < end else {
                guard frame.kind == .stringsFile else { throw unterminated() }
                return closeDictionary()
            }
            let c = bytes[p]
            if c == UInt8(ascii: "}") {
                guard frame.kind == .dictionary else {
                    throw error(.syntax, "unexpected '}' outside a dictionary", at: p)
                }
                p += 1
                return closeDictionary()
            }
            let keyOffset = p
            let key: String
            if Self.isQuote(c) {
                key = try readQuoted()
            } else if Self.isUnquoted(c) {
                key = Self.string(readWord())
            } else {
                let wanted = frame.kind == .dictionary ? "a key or '}'" : "a key"
                throw error(.syntax, "expected \(wanted), found \(describe(p))", at: p)
            }
            try skipSpace()
            guard p < end else {
                if frame.kind == .dictionary { throw unterminated() }
                throw error(.unexpectedEnd, "expected '=' or ';' after the key \"\(key)\"", at: keyOffset)
            }
            switch bytes[p] {
            case UInt8(ascii: ";"):
                p += 1
                keys.append(key)
                values.append(.string(key))
            case UInt8(ascii: "="):
                p += 1
                keys.append(key)
                return nil
            default:
                throw error(.syntax, "expected '=' or ';' after the key \"\(key)\", found \(describe(p))", at: p)
            }
        }
    }

    /// The `;` that ends every dictionary entry.
    mutating func expectEntryEnd() throws(PlistError) {
        try skipSpace()
        if p < end, bytes[p] == UInt8(ascii: ";") {
            p += 1
            return
        }
        let key = keys.last ?? ""
        if p >= end, let frame = frames.last, frame.kind == .dictionary { throw unterminated() }
        throw error(p < end ? .syntax : .unexpectedEnd,
                    "expected ';' after the value of \"\(key)\", found \(describe(p))", at: p)
    }

    mutating func closeArray() -> PlistValue {
        guard let frame = frames.popLast() else { return .array([]) }
        let items = Array(values[frame.valueStart...])
        values.removeSubrange(frame.valueStart...)
        return .array(items)
    }

    mutating func closeDictionary() -> PlistValue {
        guard let frame = frames.popLast() else { return .dictionary(PlistDictionary()) }
        let count = keys.count - frame.keyStart
        var dict = PlistDictionary(minimumCapacity: count)
        for i in 0..<count {
            _ = dict.insertFromReader(keys[frame.keyStart + i], values[frame.valueStart + i], keepFirst: false)
        }
        keys.removeSubrange(frame.keyStart...)
        values.removeSubrange(frame.valueStart...)
        return .dictionary(dict)
    }

    func checkDepth() throws(PlistError) {
        guard frames.count < maximumDepth else {
            throw error(.tooDeep, "arrays and dictionaries nested deeper than \(maximumDepth)", at: p)
        }
    }

    /// What the innermost open container was waiting for, for "unexpected character" messages.
    var expectationInFrame: String {
        switch frames.last?.kind {
        case .array?: " in an array (expected a value or ')')"
        case .dictionary?, .stringsFile?: " (expected a value after '=')"
        case nil: " (expected a value)"
        }
    }

    /// The error for input that ends inside the innermost open container.
    func unterminated() -> PlistError {
        guard let frame = frames.last else {
            return error(.unexpectedEnd, "unexpected end of input: expected a value", at: p)
        }
        switch frame.kind {
        case .array: return error(.unexpectedEnd, "unterminated array: no ')' for this '('", at: frame.open)
        case .dictionary: return error(.unexpectedEnd, "unterminated dictionary: no '}' for this '{'", at: frame.open)
        case .stringsFile: return error(.unexpectedEnd, "unexpected end of input: expected a value after '='", at: p)
        }
    }

    // MARK: Scalars

    /// An unquoted word (the caller checked its first byte).
    mutating func readWord() -> Slice<UnsafeBufferPointer<UInt8>> {
        let start = p
        while p < end, Self.isUnquoted(bytes[p]) { p += 1 }
        return bytes[start..<p]
    }

    /// A quoted string; `p` is at the opening quote.
    mutating func readQuoted() throws(PlistError) -> String {
        let open = p
        let quote = bytes[p]
        p += 1
        var mark = p
        var escaped = false
        var out: [UInt8] = []  // used only once an escape shows up
        while p < end {
            let c = bytes[p]
            if c == quote {
                let run = UnsafeBufferPointer(rebasing: bytes[mark..<p])
                p += 1
                guard escaped else { return String(decoding: run, as: UTF8.self) }
                out.append(contentsOf: run)
                return String(decoding: out, as: UTF8.self)
            }
            if c == UInt8(ascii: "\\") {
                if !escaped {
                    escaped = true
                    out.reserveCapacity(end - open)
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[mark..<p]))
                p += 1
                guard p < end else { break }
                mark = try readEscape(into: &out)
            } else {
                p += 1
            }
        }
        throw error(.unexpectedEnd, "unterminated quoted string", at: open)
    }

    /// Decodes the escape whose character is at `p` (after the backslash), appending it to `out`.
    /// Returns where the next run of plain text starts.
    mutating func readEscape(into out: inout [UInt8]) throws(PlistError) -> Int {
        let c = bytes[p]
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "7"):
            let start = p - 1
            var value = 0
            var digits = 0
            while digits < 3, p < end, bytes[p] >= UInt8(ascii: "0"), bytes[p] <= UInt8(ascii: "7") {
                value = value * 8 + Int(bytes[p] - UInt8(ascii: "0"))
                digits += 1
                p += 1
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<p]), as: UTF8.self)
            guard value <= 0o377 else {
                // CoreFoundation keeps the digits in a byte: \501 would silently read as "A".
                let wrapped = String(value & 0xFF, radix: 8)
                let shown = String(repeating: "0", count: 3 - wrapped.count) + wrapped
                throw error(.invalidValue, "octal escape \(text) is above \\377 (CoreFoundation would wrap it to \\\(shown))", at: start)
            }
            guard let scalar = Self.nextStepScalar(value) else {
                throw error(.invalidValue, "octal escape \(text) is not a character of the NeXTSTEP encoding", at: start)
            }
            Self.append(scalar, to: &out)
        case UInt8(ascii: "U"):
            let start = p - 1
            p += 1
            guard p < end, Self.hexValue(bytes[p]) != nil else {
                // CoreFoundation reads a bare \U as U+0000, a character nobody meant to write.
                throw error(.invalidValue, #"\U escape without hex digits (expected 1 to 4, as in \U00E9)"#, at: start)
            }
            var unit = readHexUnit()
            if UTF16.isLeadSurrogate(UInt16(unit)), p + 1 < end, bytes[p] == UInt8(ascii: "\\"), bytes[p + 1] == UInt8(ascii: "U") {
                let back = p
                p += 2
                let low = readHexUnit()
                if UTF16.isTrailSurrogate(UInt16(low)) {
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    p = back  // not a pair: the second escape is read on its own
                }
            }
            Self.append(Unicode.Scalar(UInt32(unit)) ?? "\u{FFFD}", to: &out)
        case UInt8(ascii: "a"): out.append(0x07); p += 1
        case UInt8(ascii: "b"): out.append(0x08); p += 1
        case UInt8(ascii: "f"): out.append(0x0C); p += 1
        case UInt8(ascii: "n"): out.append(0x0A); p += 1
        case UInt8(ascii: "r"): out.append(0x0D); p += 1
        case UInt8(ascii: "t"): out.append(0x09); p += 1
        case UInt8(ascii: "v"): out.append(0x0B); p += 1
        default:
            // Any other character stands for itself (`\\`, `\"`, `\'`, a newline, `é`...): it
            // starts the next plain run, and stepping over its first byte keeps a backslash
            // there from being read as another escape.
            p += 1
            return p - 1
        }
        return p
    }

    /// Up to four hex digits (CoreFoundation's `\U`): stops at the first non-hex character.
    mutating func readHexUnit() -> Int {
        var unit = 0
        var digits = 0
        while digits < 4, p < end, let v = Self.hexValue(bytes[p]) {
            unit = unit << 4 | Int(v)
            digits += 1
            p += 1
        }
        return unit
    }

    /// Data: `p` is at `<`. Hex pairs, with space, tab, CR, LF, U+2028 or U+2029 between them.
    mutating func readData() throws(PlistError) -> Data {
        let open = p
        p += 1
        var out: [UInt8] = []
        out.reserveCapacity((end - p) / 2)
        while p < end {
            let c = bytes[p]
            if c == UInt8(ascii: ">") {
                p += 1
                return Data(out)
            }
            if let high = Self.hexValue(c) {
                guard p + 1 < end else { break }
                guard let low = Self.hexValue(bytes[p + 1]) else {
                    throw error(.invalidValue, "data needs two hex digits per byte; found \(describe(p + 1)) after '\(Character(Unicode.Scalar(c)))'", at: p + 1)
                }
                out.append(high << 4 | low)
                p += 2
            } else if c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D {
                p += 1
            } else if let length = lineSeparatorLength(at: p) {
                p += length
            } else {
                throw error(.invalidValue, "invalid \(describe(p)) in data (expected hex digits or '>')", at: p)
            }
        }
        throw error(.unexpectedEnd, "unterminated data: no '>' for this '<'", at: open)
    }

    // MARK: Whitespace and comments

    /// Skips whitespace (ASCII 9...13, space, U+2028, U+2029) and comments.
    mutating func skipSpace() throws(PlistError) {
        while p < end {
            let c = bytes[p]
            if c == 0x20 || (c >= 0x09 && c <= 0x0D) {
                p += 1
            } else if let length = lineSeparatorLength(at: p) {
                p += length
            } else if c == UInt8(ascii: "/"), p + 1 < end, bytes[p + 1] == UInt8(ascii: "/") {
                p += 2
                while p < end, bytes[p] != 0x0A, bytes[p] != 0x0D, lineSeparatorLength(at: p) == nil { p += 1 }
            } else if c == UInt8(ascii: "/"), p + 1 < end, bytes[p + 1] == UInt8(ascii: "*") {
                let open = p
                p += 2
                while true {
                    guard p + 1 < end else {
                        p = end
                        throw error(.unexpectedEnd, "unterminated comment: no '*/' for this '/*'", at: open)
                    }
                    if bytes[p] == UInt8(ascii: "*"), bytes[p + 1] == UInt8(ascii: "/") { break }
                    p += 1
                }
                p += 2
            } else {
                return
            }
        }
    }

    /// 3 when U+2028 or U+2029 (UTF-8 `E2 80 A8/A9`) starts at `i`.
    func lineSeparatorLength(at i: Int) -> Int? {
        guard bytes[i] == 0xE2, i + 2 < end, bytes[i + 1] == 0x80, bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9 else { return nil }
        return 3
    }

    // MARK: Errors

    func error(_ code: PlistError.Code, _ message: String, at offset: Int) -> PlistError {
        PlistError(code, message, at: position(of: offset))
    }

    /// Line and column (in bytes, both from 1) of a byte offset; CR, LF and CRLF end lines.
    func position(of offset: Int) -> PlistError.Position {
        var line = 1
        var lineStart = 0
        var i = 0
        let limit = min(offset, end)
        while i < limit {
            let c = bytes[i]
            if c == 0x0A || c == 0x0D {
                if c == 0x0D, i + 1 < limit, bytes[i + 1] == 0x0A { i += 1 }
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        return .line(line, column: offset - lineStart + 1)
    }

    /// `'x'` for a printable ASCII character, `U+XXXX` otherwise, `end of input` past the end.
    func describe(_ i: Int) -> String {
        guard i < end else { return "end of input" }
        let c = bytes[i]
        if c >= 0x21, c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        var iterator = UnsafeBufferPointer(rebasing: bytes[i...]).makeIterator()
        var decoder = UTF8()
        var code: UInt32 = UInt32(c)
        if c >= 0x80, case .scalarValue(let scalar) = decoder.decode(&iterator) { code = scalar.value }
        let hex = String(code, radix: 16, uppercase: true)
        return "character U+" + String(repeating: "0", count: max(0, 4 - hex.utf8.count)) + hex
    }

    // MARK: Character classes

    /// `A-Z a-z 0-9 _ $ + / : . -`.
    static func isUnquoted(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    static func isQuote(_ c: UInt8) -> Bool { c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") }

    package static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// ASCII bytes (an unquoted word) as a string.
    static func string(_ word: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: word), as: UTF8.self)
    }

    static func append(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        UTF8.encode(scalar) { out.append($0) }
    }

    /// The character a byte stands for in the NeXTSTEP encoding (octal escapes use it), or `nil`
    /// for the two unassigned bytes and anything above a byte.
    static func nextStepScalar(_ byte: Int) -> Unicode.Scalar? {
        guard byte >= 0, byte < 0x100 else { return nil }
        guard byte >= 0x80 else { return Unicode.Scalar(UInt8(byte)) }
        let code = nextStepHighHalf[byte - 0x80]
        guard code != 0xFFFD else { return nil }
        return Unicode.Scalar(code)
    }

    /// NeXTSTEP bytes 0x80...0xFF in Unicode (Unicode's NEXTSTEP.TXT mapping; 0xFFFD = unassigned).
    static let nextStepHighHalf: [UInt16] = [
        0x00A0, 0x00C0, 0x00C1, 0x00C2, 0x00C3, 0x00C4, 0x00C5, 0x00C7, 0x00C8, 0x00C9, 0x00CA, 0x00CB, 0x00CC, 0x00CD, 0x00CE, 0x00CF,
        0x00D0, 0x00D1, 0x00D2, 0x00D3, 0x00D4, 0x00D5, 0x00D6, 0x00D9, 0x00DA, 0x00DB, 0x00DC, 0x00DD, 0x00DE, 0x00B5, 0x00D7, 0x00F7,
        0x00A9, 0x00A1, 0x00A2, 0x00A3, 0x2044, 0x00A5, 0x0192, 0x00A7, 0x00A4, 0x2019, 0x201C, 0x00AB, 0x2039, 0x203A, 0xFB01, 0xFB02,
        0x00AE, 0x2013, 0x2020, 0x2021, 0x00B7, 0x00A6, 0x00B6, 0x2022, 0x201A, 0x201E, 0x201D, 0x00BB, 0x2026, 0x2030, 0x00AC, 0x00BF,
        0x00B9, 0x02CB, 0x00B4, 0x02C6, 0x02DC, 0x00AF, 0x02D8, 0x02D9, 0x00A8, 0x00B2, 0x02DA, 0x00B8, 0x00B3, 0x02DD, 0x02DB, 0x02C7,
        0x2014, 0x00B1, 0x00BC, 0x00BD, 0x00BE, 0x00E0, 0x00E1, 0x00E2, 0x00E3, 0x00E4, 0x00E5, 0x00E7, 0x00E8, 0x00E9, 0x00EA, 0x00EB,
        0x00EC, 0x00C6, 0x00ED, 0x00AA, 0x00EE, 0x00EF, 0x00F0, 0x00F1, 0x0141, 0x00D8, 0x0152, 0x00BA, 0x00F2, 0x00F3, 0x00F4, 0x00F5,
        0x00F6, 0x00E6, 0x00F9, 0x00FA, 0x00FB, 0x0131, 0x00FC, 0x00FD, 0x0142, 0x00F8, 0x0153, 0x00DF, 0x00FE, 0x00FF, 0xFFFD, 0xFFFD,
    ]
}
