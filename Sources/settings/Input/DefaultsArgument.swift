#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

/// `defaults write`'s typed values (`-int 5`, `-bool YES`, `-array a b`...).
enum DefaultsArgument {
    static func value(type: String, _ values: [String]) throws(PlistError) -> PlistValue {
        let name = type.hasPrefix("-") ? String(type.dropFirst()) : type
        switch name {
        case "array":
            return .array(values.map { .string($0) })
        case "dict":
            guard values.count % 2 == 0 else {
                throw PlistError(.invalidValue, "-dict needs key value pairs; \"\(values.last ?? "")\" has no value")
            }
            var dict = PlistDictionary(minimumCapacity: values.count / 2)
            for i in stride(from: 0, to: values.count, by: 2) {
                dict[values[i]] = .string(values[i + 1])  // a repeated key keeps its first place and its last value
            }
            return .dictionary(dict)
        case "string", "int", "integer", "float", "bool", "boolean", "date", "data":
            guard values.count == 1, let text = values.first else {
                throw PlistError(.invalidValue, "-\(name) takes exactly one value, got \(values.count)")
            }
            return try scalar(name, text)
        default:
            throw PlistError(.invalidValue, "unknown type \"\(type)\" (expected -string, -int, -float, -bool, -date, -data, -array or -dict)")
        }
    }

    static func scalar(_ name: String, _ text: String) throws(PlistError) -> PlistValue {
        var copy = text
        let parsed: PlistValue? = copy.withUTF8 { buffer in
            let word = buffer[...]
            switch name {
            case "string":
                return .string(text)
            case "int", "integer":
                guard let v = LiteralScalars.integer(word), v.int64Value != nil else { return nil }
                return .integer(v)
            case "float":
                guard LiteralScalars.integer(word) != nil || LiteralScalars.isDecimal(word),
                      let v = Double(text), v.isFinite else { return nil }
                return .real(v)
            case "bool", "boolean":
                if ["yes", "true", "1"].contains(where: { text.lowercased() == $0 }) { return .bool(true) }
                if ["no", "false", "0"].contains(where: { text.lowercased() == $0 }) { return .bool(false) }
                return nil
            case "date":
                return date(word).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
            default:
                return data(word).map { .data($0) }
            }
        }
        guard let parsed else {
            throw PlistError(.invalidValue, "\"\(text)\" is not a valid -\(name) value\(hint(name))")
        }
        return parsed
    }

    static func hint(_ name: String) -> String {
        switch name {
        case "int", "integer": " (expected an integer within the 64-bit signed range)"
        case "float": " (expected a decimal number)"
        case "bool", "boolean": " (expected YES, NO, true, false, 1 or 0)"
        case "date": " (expected YYYY-MM-DDTHH:MM:SSZ or YYYY-MM-DD HH:MM:SS +0000)"
        case "data": " (expected pairs of hex digits)"
        default: ""
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DD HH:MM:SS ±HHMM`, as seconds since 2001.
    static func date(_ word: Slice<UnsafeBufferPointer<UInt8>>) -> Double? {
        let b = Array(word)
        func number(_ at: Int, _ width: Int) -> Int64? {
            guard at + width <= b.count else { return nil }
            var v: Int64 = 0
            for c in b[at..<at + width] {
                guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
                v = v * 10 + Int64(c - UInt8(ascii: "0"))
            }
            return v
        }
        func byte(_ at: Int, _ c: Character) -> Bool { at < b.count && b[at] == c.asciiValue }
        guard let year = number(0, 4), byte(4, "-"), let month = number(5, 2), byte(7, "-"),
              let day = number(8, 2), let hour = number(11, 2), byte(13, ":"),
              let minute = number(14, 2), byte(16, ":"), let second = number(17, 2)
        else { return nil }
        var offsetSeconds: Int64 = 0
        if byte(10, "T"), byte(19, "Z"), b.count == 20 {
            offsetSeconds = 0
        } else if byte(10, " "), byte(19, " "), b.count == 25, byte(20, "+") || byte(20, "-"),
                  let oh = number(21, 2), let om = number(23, 2), oh < 24, om < 60 {
            offsetSeconds = (oh * 3600 + om * 60) * (byte(20, "-") ? -1 : 1)
        } else {
            return nil
        }
        guard (1...12).contains(month), day >= 1, hour < 24, minute < 60, second < 60 else { return nil }
        let daysInMonth = PlistDate.days(year: year, month: month + 1, day: 1) - PlistDate.days(year: year, month: month, day: 1)
        guard day <= daysInMonth,
              let local = PlistDate.seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        return Double(local - offsetSeconds)
    }

    /// Hex pairs, whitespace between pairs, optionally wrapped in `< >`.
    static func data(_ word: Slice<UnsafeBufferPointer<UInt8>>) -> Data? {
        var body = word[...]
        if body.first == UInt8(ascii: "<"), body.last == UInt8(ascii: ">") { body = body.dropFirst().dropLast() }
        var out: [UInt8] = []
        out.reserveCapacity(body.count / 2)
        var i = body.startIndex
        while i < body.endIndex {
            let c = body[i]
            if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
                i += 1
                continue
            }
            guard let high = LiteralParser.hexValue(c), i + 1 < body.endIndex,
                  let low = LiteralParser.hexValue(body[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return Data(out)
    }
}
