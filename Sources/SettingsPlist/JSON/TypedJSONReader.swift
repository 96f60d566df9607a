#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads typed JSON: a small strict JSON parser that keeps integers exact.
struct TypedJSONReader {
    /// A parsed JSON value, before it is given its plist meaning.
    enum JSON {
        case object([(String, JSON)])
        case array([JSON])
        case string(String)
        /// The number's text, kept so integers are read exactly.
        case number(Substring)
        case bool(Bool)
        case null
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var pos = 0
    let maximumDepth: Int
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func readDocument() throws(PlistError) -> PlistValue {
        skipSpace()
        let start = pos
        let json = try parseValue()
        skipSpace()
        guard pos == bytes.count else { throw error(.syntax, "unexpected text after the JSON value") }
        pos = start
        return try plist(json)
    }

    // MARK: JSON syntax

    func error(_ code: PlistError.Code, _ message: String, at offset: Int? = nil) -> PlistError {
        let at = min(offset ?? pos, bytes.count)
        var line = 1, column = 1
        for i in 0..<at {
            if bytes[i] == 0x0A { line += 1; column = 1 } else { column += 1 }
        }
        return PlistError(code, message, at: .line(line, column: column))
    }

    mutating func skipSpace() {
        while pos < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[pos]) { pos += 1 }
    }

    mutating func expect(_ c: UInt8) throws(PlistError) {
        skipSpace()
        guard pos < bytes.count, bytes[pos] == c else {
            throw error(pos < bytes.count ? .syntax : .unexpectedEnd, "expected '\(Character(Unicode.Scalar(c)))'")
        }
        pos += 1
    }

    mutating func parseValue() throws(PlistError) -> JSON {
        skipSpace()
        guard pos < bytes.count else { throw error(.unexpectedEnd, "unexpected end of JSON") }
        switch bytes[pos] {
        case UInt8(ascii: "{"):
            depth += 1
            defer { depth -= 1 }
            guard depth <= maximumDepth + 1 else { throw error(.tooDeep, "nested deeper than \(maximumDepth)") }
            pos += 1
            var members: [(String, JSON)] = []
            skipSpace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(members) }
            while true {
                skipSpace()
                let key = try parseString()
                try expect(UInt8(ascii: ":"))
                members.append((key, try parseValue()))
                skipSpace()
                guard pos < bytes.count else { throw error(.unexpectedEnd, "unexpected end of JSON") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                try expect(UInt8(ascii: "}"))
                return .object(members)
            }
        case UInt8(ascii: "["):
            pos += 1
            var items: [JSON] = []
            skipSpace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(items) }
            while true {
                items.append(try parseValue())
                skipSpace()
                guard pos < bytes.count else { throw error(.unexpectedEnd, "unexpected end of JSON") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                try expect(UInt8(ascii: "]"))
                return .array(items)
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default:
            return .number(try parseNumber())
        }
    }

    mutating func literal(_ word: String) throws(PlistError) {
        for c in word.utf8 {
            guard pos < bytes.count, bytes[pos] == c else { throw error(.syntax, "invalid JSON literal") }
            pos += 1
        }
    }

    mutating func parseNumber() throws(PlistError) -> Substring {
        let start = pos
        func isNumberByte(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+")
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
        }
        while pos < bytes.count, isNumberByte(bytes[pos]) { pos += 1 }
        guard pos > start else { throw error(.syntax, "unexpected character in JSON") }
        return Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
    }

    mutating func parseString() throws(PlistError) -> String {
        guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw error(.syntax, "expected a JSON string") }
        pos += 1
        var utf8: [UInt8] = []
        var pendingHigh: UInt16?
        while true {
            guard pos < bytes.count else { throw error(.unexpectedEnd, "unterminated JSON string") }
            let b = bytes[pos]
            if b == UInt8(ascii: "\"") { pos += 1; break }
            if b != UInt8(ascii: "\\") {
                if pendingHigh != nil { throw error(.invalidValue, "lone surrogate in JSON string") }
                utf8.append(b)
                pos += 1
                continue
            }
            pos += 1
            guard pos < bytes.count else { throw error(.unexpectedEnd, "unterminated JSON string") }
            let e = bytes[pos]
            pos += 1
            if e != UInt8(ascii: "u"), pendingHigh != nil { throw error(.invalidValue, "lone surrogate in JSON string") }
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(e)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "u"):
                guard pos + 4 <= bytes.count,
                      let unit = UInt16(String(decoding: UnsafeBufferPointer(rebasing: bytes[pos..<pos + 4]), as: UTF8.self), radix: 16)
                else { throw error(.invalidValue, "invalid \\u escape") }
                pos += 4
                var scalar: Unicode.Scalar?
                if let high = pendingHigh {
                    guard (0xDC00...0xDFFF).contains(unit) else { throw error(.invalidValue, "lone surrogate in JSON string") }
                    scalar = Unicode.Scalar(0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(unit) - 0xDC00))
                    pendingHigh = nil
                } else if (0xD800...0xDBFF).contains(unit) {
                    pendingHigh = unit
                } else if (0xDC00...0xDFFF).contains(unit) {
                    throw error(.invalidValue, "lone surrogate in JSON string")
                } else {
                    scalar = Unicode.Scalar(unit)
                }
                if let scalar { utf8.append(contentsOf: String(Character(scalar)).utf8) }
            default:
                throw error(.syntax, "invalid escape in JSON string")
            }
        }
        if pendingHigh != nil { throw error(.invalidValue, "lone surrogate in JSON string") }
        guard let s = String(validating: utf8, as: UTF8.self) else { throw error(.invalidValue, "invalid UTF-8 in JSON string") }
        return s
    }

    // MARK: Typed meaning

    func plist(_ json: JSON) throws(PlistError) -> PlistValue {
        guard case .object(let members) = json, members.count == 1, let (type, payload) = members.first else {
            throw error(.syntax, "expected an object with one key naming the type")
        }
        switch (type, payload) {
        case ("string", .string(let s)): return .string(s)
        case ("int", .number(let n)):
            if let v = Int64(n) { return .integer(PlistInteger(v)) }
            if let v = UInt64(n) { return .integer(PlistInteger(v)) }
            throw error(.integerOverflow, "integer \(n) is outside Int64.min ... UInt64.max")
        case ("real", .number(let n)):
            guard let d = Double(n) else { throw error(.invalidValue, "invalid real \(n)") }
            return .real(d)
        case ("real", .string(let s)):
            switch s {
            case "nan": return .real(.nan)
            case "inf", "+inf": return .real(.infinity)
            case "-inf": return .real(-.infinity)
            default: throw error(.invalidValue, "invalid real \"\(s)\"")
            }
        case ("bool", .bool(let b)): return .bool(b)
        case ("date", .string(let s)):
            switch s {
            case "nan": return .date(Date(timeIntervalSinceReferenceDate: .nan))
            case "inf", "+inf": return .date(Date(timeIntervalSinceReferenceDate: .infinity))
            case "-inf": return .date(Date(timeIntervalSinceReferenceDate: -.infinity))
            default:
                guard let t = PlistDate.parse(s.utf8, allowFraction: true) else { throw error(.invalidValue, "invalid date \"\(s)\"") }
                return .date(Date(timeIntervalSinceReferenceDate: t))
            }
        case ("date", .number(let n)):
            // Seconds since 2001-01-01T00:00:00Z, for dates that ISO text cannot carry.
            guard let t = Double(n), t.isFinite else { throw error(.invalidValue, "invalid date \(n) (seconds since 2001-01-01T00:00:00Z)") }
            return .date(Date(timeIntervalSinceReferenceDate: t))
        case ("data", .string(let s)):
            guard let d = Data(base64Encoded: s) else { throw error(.invalidValue, "invalid base64 data") }
            return .data(d)
        case ("uid", .number(let n)):
            guard let u = UInt64(n) else { throw error(.invalidValue, "invalid uid \(n)") }
            return .uid(u)
        case ("array", .array(let items)):
            var out: [PlistValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try plist(item)) }
            return .array(out)
        case ("dict", .array(let pairs)):
            var dict = PlistDictionary(minimumCapacity: pairs.count)
            for pair in pairs {
                guard case .array(let kv) = pair, kv.count == 2, case .string(let key) = kv[0] else {
                    throw error(.syntax, "a dict entry must be [\"key\", VALUE]")
                }
                dict[key] = try plist(kv[1])
            }
            return .dictionary(dict)
        default:
            throw error(.syntax, "unknown typed value \"\(type)\" or wrong payload")
        }
    }
}
