import SettingsPlist

/// Plain JSON for a plist, as `plutil -convert json` writes it: dictionaries, arrays, strings,
/// numbers and Booleans. Dates and data have no JSON form: like `plutil`, they are refused, and
/// the error names the key path (use `--typed-json` to keep every type).
enum JSONOutput {
    struct Unrepresentable: Error {
        var path: String
        var typeName: String
    }

    static func text(_ value: PlistValue, pretty: Bool = true) throws(Unrepresentable) -> String {
        var out = ""
        try write(value, path: "", indent: 0, pretty: pretty, into: &out)
        return out
    }

    private static func write(_ value: PlistValue, path: String, indent: Int, pretty: Bool, into out: inout String) throws(Unrepresentable) {
        let pad = pretty ? String(repeating: "  ", count: indent + 1) : ""
        let close = pretty ? String(repeating: "  ", count: indent) : ""
        let newline = pretty ? "\n" : ""
        switch value {
        case .dictionary(let dict):
            guard !dict.isEmpty else { out += "{}"; return }
            out += "{" + newline
            for (i, (key, child)) in dict.enumerated() {
                out += pad + quoted(key) + (pretty ? ": " : ":")
                try write(child, path: path.isEmpty ? key : path + "/" + key, indent: indent + 1, pretty: pretty, into: &out)
                out += (i == dict.count - 1 ? "" : ",") + newline
            }
            out += close + "}"
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "[" + newline
            for (i, child) in items.enumerated() {
                out += pad
                try write(child, path: path + "[\(i)]", indent: indent + 1, pretty: pretty, into: &out)
                out += (i == items.count - 1 ? "" : ",") + newline
            }
            out += close + "]"
        case .string(let s): out += quoted(s)
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += "\(i)"
        case .real(let r):
            guard r.isFinite else { throw Unrepresentable(path: path, typeName: "a non-finite real") }
            out += r == r.rounded() && abs(r) < 1e15 ? "\(Int64(r)).0" : "\(r)"
        case .date: throw Unrepresentable(path: path, typeName: "a date")
        case .data: throw Unrepresentable(path: path, typeName: "data")
        default: throw Unrepresentable(path: path, typeName: value.typeName)
        }
    }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
