/// Reads plain JSON (what `plutil -convert json` and `settings print --json` write) as a
/// property list: objects become dictionaries in their order (a repeated key keeps its last
/// value), whole numbers integers, other numbers reals. `null` has no property-list form and is
/// an error, as in `plutil`. Iterative where it nests, bounded by a depth limit.
package struct JSONReader {
    let bytes: [UInt8]
    var p = 0
    var depth = 0
    static let maximumDepth = 512

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p = 3 }
    }

    /// The document's one value.
    package mutating func read() throws(PlistError) -> PlistValue {
        let value = try readValue()
        skipSpace()
        guard p == bytes.count else { throw error(.syntax, "unexpected \(describe(p)) after the JSON value") }
        return value
    }

    mutating func readValue() throws(PlistError) -> PlistValue {
        skipSpace()
        guard p < bytes.count else { throw error(.unexpectedEnd, "expected a JSON value, found end of input") }
        switch bytes[p] {
        case UInt8(ascii: "{"):
            let open = p
            try enter()
            p += 1
            var dict = PlistDictionary()
            skipSpace()
            if p < bytes.count, bytes[p] == UInt8(ascii: "}") {
                p += 1
                depth -= 1
                return .dictionary(dict)
            }
            while true {
                skipSpace()
                guard p < bytes.count else { throw error(.unexpectedEnd, "unterminated object", at: open) }
                guard bytes[p] == UInt8(ascii: "\"") else { throw error(.syntax, "expected a string key, found \(describe(p))") }
                let key = try readString()
                skipSpace()
                guard p < bytes.count, bytes[p] == UInt8(ascii: ":") else {
                    throw error(.syntax, "expected ':' after the key \"\(key)\", found \(describe(p))")
                }
                p += 1
                let value = try readValue()
                _ = dict.replaceValue(value, forKey: key)
                skipSpace()
                guard p < bytes.count else { throw error(.unexpectedEnd, "unterminated object", at: open) }
                if bytes[p] == UInt8(ascii: ",") { p += 1; continue }
                if bytes[p] == UInt8(ascii: "}") { p += 1; break }
                throw error(.syntax, "expected ',' or '}' in an object, found \(describe(p))")
            }
            depth -= 1
            return .dictionary(dict)
        case UInt8(ascii: "["):
            let open = p
            try enter()
            p += 1
            var items: [PlistValue] = []
            skipSpace()
            if p < bytes.count, bytes[p] == UInt8(ascii: "]") {
                p += 1
                depth -= 1
                return .array(items)
            }
            while true {
                items.append(try readValue())
                skipSpace()
                guard p < bytes.count else { throw error(.unexpectedEnd, "unterminated array", at: open) }
                if bytes[p] == UInt8(ascii: ",") { p += 1; continue }
                if bytes[p] == UInt8(ascii: "]") { p += 1; break }
                throw error(.syntax, "expected ',' or ']' in an array, found \(describe(p))")
            }
            depth -= 1
            return .array(items)
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            throw error(.invalidValue, "null has no property-list form")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try readNumber()
        default:
            throw error(.syntax, "unexpected \(describe(p))")
        }
    }

    mutating func enter() throws(PlistError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error(.tooDeep, "arrays and objects nested deeper than \(Self.maximumDepth)")
        }
    }

    mutating func expectWord(_ word: String) throws(PlistError) {
        let w = Array(word.utf8)
        guard bytes.count - p >= w.count, Array(bytes[p..<p + w.count]) == w else {
            throw error(.syntax, "unexpected \(describe(p))")
        }
        p += w.count
    }

    mutating func readNumber() throws(PlistError) -> PlistValue {
        let start = p
        if bytes[p] == UInt8(ascii: "-") { p += 1 }
        func digits(_ p: inout Int, _ bytes: [UInt8]) -> Int {
            let s = p
            while p < bytes.count, bytes[p] >= UInt8(ascii: "0"), bytes[p] <= UInt8(ascii: "9") { p += 1 }
            return p - s
        }
        let intStart = p
        guard digits(&p, bytes) > 0 else { throw error(.syntax, "invalid number", at: start) }
        if bytes[intStart] == UInt8(ascii: "0"), p - intStart > 1 { throw error(.syntax, "invalid number: leading zero", at: start) }
        var isInteger = true
        if p < bytes.count, bytes[p] == UInt8(ascii: ".") {
            p += 1
            isInteger = false
            guard digits(&p, bytes) > 0 else { throw error(.syntax, "invalid number: no digits after '.'", at: start) }
        }
        if p < bytes.count, bytes[p] | 0x20 == UInt8(ascii: "e") {
            p += 1
            isInteger = false
            if p < bytes.count, bytes[p] == UInt8(ascii: "+") || bytes[p] == UInt8(ascii: "-") { p += 1 }
            guard digits(&p, bytes) > 0 else { throw error(.syntax, "invalid number: no digits in the exponent", at: start) }
        }
        let text = String(decoding: bytes[start..<p], as: UTF8.self)
        if isInteger, let value = PlistValue.inferredScalar(text), case .integer = value { return value }
        guard let real = Double(text), real.isFinite else {
            throw error(.invalidValue, "number \(text) is out of range", at: start)
        }
        return .real(real)
    }

    mutating func readString() throws(PlistError) -> String {
        let open = p
        p += 1
        var out: [UInt8] = []
        while true {
            guard p < bytes.count else { throw error(.unexpectedEnd, "unterminated string", at: open) }
            let c = bytes[p]
            if c == UInt8(ascii: "\"") { p += 1; break }
            if c < 0x20 { throw error(.syntax, "control character U+00\(c < 16 ? "0" : "")\(String(c, radix: 16, uppercase: true)) in a string") }
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                p += 1
                continue
            }
            p += 1
            guard p < bytes.count else { throw error(.unexpectedEnd, "unterminated string", at: open) }
            let escape = bytes[p]
            p += 1
            switch escape {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), bytes.count - p >= 6, bytes[p] == UInt8(ascii: "\\"), bytes[p + 1] == UInt8(ascii: "u") {
                    let save = p
                    p += 2
                    let low = try hex4()
                    if (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        p = save
                    }
                }
                let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                UTF8.encode(scalar) { out.append($0) }
            default:
                throw error(.syntax, "invalid escape '\\\(Character(Unicode.Scalar(escape)))' in a string", at: p - 2)
            }
        }
        guard let string = String(validating: out, as: UTF8.self) else {
            throw error(.invalidValue, "a string is not valid UTF-8", at: open)
        }
        return string
    }

    mutating func hex4() throws(PlistError) -> UInt32 {
        guard bytes.count - p >= 4 else { throw error(.unexpectedEnd, "\\u needs four hex digits") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[p]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error(.syntax, "\\u needs four hex digits, found \(describe(p))")
            }
            v = v << 4 | d
            p += 1
        }
        return v
    }

    mutating func skipSpace() {
        while p < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[p]) { p += 1 }
    }

    func describe(_ i: Int) -> String {
        guard i < bytes.count else { return "end of input" }
        let c = bytes[i]
        if c >= 0x21, c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return "byte 0x\(String(c, radix: 16, uppercase: true))"
    }

    func error(_ code: PlistError.Code, _ message: String, at offset: Int? = nil) -> PlistError {
        let offset = min(offset ?? p, bytes.count)
        var line = 1, lineStart = 0, i = 0
        while i < offset {
            if bytes[i] == 0x0A { line += 1; lineStart = i + 1 }
            i += 1
        }
        return PlistError(code, message, at: .line(line, column: offset - lineStart + 1))
    }
}
