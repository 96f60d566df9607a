#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

/// The forms the tool prints values in, beyond the codec's own writers.
enum Render {
    /// `plutil -p`'s human-readable form: `"key" => value`, arrays with their indexes, two
    /// spaces per level; not meant for machines. Control characters in keys and strings are
    /// escaped (`String.escapingControlCharacters`): one line per value, whatever it holds.
    static func human(_ value: PlistValue) -> String {
        var out = ""
        human(value, indent: 0, into: &out)
        return out
    }

    private static func human(_ value: PlistValue, indent: Int, into out: inout String) {
        let pad = String(repeating: "  ", count: indent + 1)
        let closePad = String(repeating: "  ", count: indent)
        switch value {
        case .dictionary(let dict):
            out += "{\n"
            for (key, child) in dict {
                out += pad + "\"" + key.escapingControlCharacters + "\" => "
                human(child, indent: indent + 1, into: &out)
                out += "\n"
            }
            out += closePad + "}"
        case .array(let items):
            out += "[\n"
            for (i, child) in items.enumerated() {
                out += pad + "\(i) => "
                human(child, indent: indent + 1, into: &out)
                out += "\n"
            }
            out += closePad + "]"
        case .string(let s): out += "\"" + s.escapingControlCharacters + "\""
        case .bool(let b): out += b ? "true" : "false"
        case .real(let r): out += r.description  // as plutil -p: `30.0`, `-0.0`, `1e+20`
        case .date(let d):
            let iso = PlistValue.date(d).description  // 2026-11-23T10:15:02Z, with any fraction
            out += String(iso.prefix(19)).replacing("T", with: " ") + " +0000"
        case .data(let d):
            let bytes = Array(d)
            let hex = { (b: ArraySlice<UInt8>) in b.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
            let shown = bytes.count <= 24 ? hex(bytes[...]) : hex(bytes.prefix(8)) + " ... " + hex(bytes.suffix(8))
            out += "{length = \(bytes.count), bytes = 0x\(shown)}"
        case .uid(let u): out += "<CFKeyedArchiverUID>{value = \(u)}"
        default: out += value.displayText
        }
    }

    /// A value on one line, for `diff`: OpenStep-like, reals always with a point (`1.0`),
    /// Booleans as `true`/`false`, dates in ISO 8601 with any fraction.
    static func oneLine(_ value: PlistValue) -> String {
        switch value {
        case .dictionary(let dict):
            guard !dict.isEmpty else { return "{ }" }
            return "{ " + dict.map { PlistValue.string($0.key).literalText + " = " + oneLine($0.value) + ";" }.joined(separator: " ") + " }"
        case .array(let items):
            return "(" + items.map(oneLine).joined(separator: ", ") + ")"
        case .real(let r): return r.description
        case .bool(let b): return b ? "true" : "false"
        case .date: return value.description
        case .string: return value.literalText
        default: return value.displayText
        }
    }

    /// Plain JSON on one line, as `plutil -convert json` writes it without `-r`.
    static func compactJSON(_ pretty: String) -> String {
        var out: [UInt8] = []
        var inString = false, escaped = false
        for c in pretty.utf8 {
            if inString {
                out.append(c)
                if escaped { escaped = false } else if c == UInt8(ascii: "\\") { escaped = true } else if c == UInt8(ascii: "\"") { inString = false }
            } else if c == UInt8(ascii: "\"") {
                inString = true
                out.append(c)
            } else if c != 0x20 && c != 0x0A {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Plain JSON (readable with two-space indentation, else compact), or an error naming the
    /// file and the key path of a value JSON cannot hold.
    static func json(_ value: PlistValue, readable: Bool, file: String, hint: String = "") throws(CLIError) -> String {
        do {
            let text = try value.jsonText()
            return readable ? text : compactJSON(text)
        } catch {
            throw .failure("\(file): key '\(error.codingPath ?? "")': \(error.message)\(hint)")
        }
    }
}
