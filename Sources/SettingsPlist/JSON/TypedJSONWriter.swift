#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes typed JSON.
package enum TypedJSONWriter {
    static func write(_ value: PlistValue, into out: inout [UInt8]) {
        switch value {
        case .string(let s): wrap("string", into: &out) { appendString(s, into: &$0) }
        case .integer(let i): wrap("int", into: &out) { $0.append(contentsOf: i.description.utf8) }
        case .real(let d):
            wrap("real", into: &out) { o in
                if d.isNaN { o.append(contentsOf: #""nan""#.utf8) }
                else if d.isInfinite { o.append(contentsOf: (d < 0 ? #""-inf""# : #""inf""#).utf8) }
                else { o.append(contentsOf: d.description.utf8) }
            }
        case .bool(let b): wrap("bool", into: &out) { $0.append(contentsOf: (b ? "true" : "false").utf8) }
        case .date(let d):
            wrap("date", into: &out) { appendDate(d.timeIntervalSinceReferenceDate, into: &$0) }
        case .data(let d): wrap("data", into: &out) { appendString(d.base64EncodedString(), into: &$0) }
        case .uid(let u): wrap("uid", into: &out) { $0.append(contentsOf: String(u).utf8) }
        case .array(let a):
            wrap("array", into: &out) { o in
                o.append(UInt8(ascii: "["))
                for (i, v) in a.enumerated() {
                    if i > 0 { o.append(contentsOf: ", ".utf8) }
                    write(v, into: &o)
                }
                o.append(UInt8(ascii: "]"))
            }
        case .dictionary(let d):
            wrap("dict", into: &out) { o in
                o.append(UInt8(ascii: "["))
                for i in 0..<d.count {
                    if i > 0 { o.append(contentsOf: ", ".utf8) }
                    o.append(UInt8(ascii: "["))
                    appendString(d.keys[i], into: &o)
                    o.append(contentsOf: ", ".utf8)
                    write(d.values[i], into: &o)
                    o.append(UInt8(ascii: "]"))
                }
                o.append(UInt8(ascii: "]"))
            }
        }
    }

    /// A date's payload: its ISO-8601 text with the shortest exact fraction; where no such text
    /// reads back to the same double, `"nan"`, `"inf"`, `"-inf"`, or the seconds since
    /// 2001-01-01T00:00:00Z as a JSON number (beyond years ±99,999,999, or `5e-324`).
    static func appendDate(_ t: Double, into out: inout [UInt8]) {
        if let text = PlistDate.isoText(t, fraction: true) {
            appendString(text, into: &out)
        } else if t.isNaN {
            out.append(contentsOf: #""nan""#.utf8)
        } else if t.isInfinite {
            out.append(contentsOf: (t < 0 ? #""-inf""# : #""inf""#).utf8)
        } else {
            out.append(contentsOf: t.description.utf8)
        }
    }

    private static func wrap(_ type: String, into out: inout [UInt8], _ body: (inout [UInt8]) -> Void) {
        out.append(contentsOf: "{\"\(type)\": ".utf8)
        body(&out)
        out.append(UInt8(ascii: "}"))
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, the rest raw UTF-8.
    package static func appendString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
