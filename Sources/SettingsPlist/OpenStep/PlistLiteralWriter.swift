#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PlistValue {
    /// The value in the OpenStep text syntax, laid out the way `defaults read` prints it:
    /// dictionaries as `{ key = value; }`, arrays as `( a, b )`, Booleans as `1` and `0`,
    /// numbers bare, strings quoted when they are not a plain word, data as `<0fbd 7777>` and dates
    /// as quoted `"2026-11-23 10:15:02 +0000"`.
    ///
    /// ```swift
    /// let value: PlistValue = ["name": "Ada L", "Network": ["timeout": 30]]
    /// print(value.literalText)
    /// // {
    /// //     name = "Ada L";
    /// //     Network = {
    /// //         timeout = 30;
    /// //     };
    /// // }
    /// ```
    public var literalText: String {
        var out = ""
        PlistLiteralWriter.write(self, indent: 0, into: &out)
        return out
    }
}

extension PlistValue {
    /// The value as `defaults read DOMAIN KEY` prints it: ``literalText``, except that a string
    /// is printed as it is, without quotes or escapes.
    ///
    /// ```swift
    /// PlistValue.string("Ada L").displayText   // Ada L
    /// PlistValue.bool(true).displayText        // 1
    /// ```
    package var displayText: String { PlistLiteralWriter.scalarText(self) }
}

/// Writes OpenStep text, iteratively bounded by the value's depth (values are depth-limited when read).
enum PlistLiteralWriter {
    static func write(_ value: PlistValue, indent: Int, into out: inout String) {
        let pad = String(repeating: "    ", count: indent)
        switch value {
        case .dictionary(let dict):
            guard !dict.isEmpty else { out += "{\n" + pad + "}"; return }
            out += "{\n"
            for (key, child) in dict {
                out += pad + "    " + quoted(key) + " = "
                write(child, indent: indent + 1, into: &out)
                out += ";\n"
            }
            out += pad + "}"
        case .array(let items):
            guard !items.isEmpty else { out += "(\n" + pad + ")"; return }
            out += "(\n"
            for (i, child) in items.enumerated() {
                out += pad + "    "
                write(child, indent: indent + 1, into: &out)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += pad + ")"
        case .string(let s):
            out += quoted(s)
        default:
            out += scalarText(value)
        }
    }

    /// A scalar as `defaults read` prints it at the top level (strings unquoted).
    static func scalarText(_ value: PlistValue) -> String {
        switch value {
        case .string(let s): return s
        case .bool(let b): return b ? "1" : "0"
        case .integer(let i): return "\(i)"
        case .real(let r): return r == r.rounded() && abs(r) < 1e15 ? String(Int64(r)) : "\(r)"
        case .date(let d): return "\"" + dateText(d) + "\""
        case .data(let bytes):
            var hex = "<"
            for (i, byte) in bytes.enumerated() {
                if i > 0 && i % 4 == 0 { hex += " " }
                hex += byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
            }
            return hex + ">"
        default:
            var out = ""
            write(value, indent: 0, into: &out)
            return out
        }
    }

    /// `2026-11-23 10:15:02 +0000`; `nan`, `inf`, `-inf` or `1e+300 seconds since
    /// 2001-01-01T00:00:00Z` for a date with no such text (never a made-up year).
    static func dateText(_ date: Date) -> String {
        let t = date.timeIntervalSinceReferenceDate
        guard let iso = PlistDate.isoText(t, fraction: false) else { return PlistDate.nonISOText(t) }  // 2026-11-23T10:15:02Z
        return String(iso.dropLast()).replacing("T", with: " ") + " +0000"
    }

    /// The text as an OpenStep word when it is one, else quoted with escapes.
    static func quoted(_ s: String) -> String {
        let plain = !s.isEmpty && s.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == UInt8(ascii: "_") || c == UInt8(ascii: "$") || c == UInt8(ascii: ".")
                || c == UInt8(ascii: "/") || c == UInt8(ascii: ":") || c == UInt8(ascii: "-")
        }
        if plain { return s }
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 {
                    out += "\\U" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
