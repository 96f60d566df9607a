#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PlistValue {
    /// The value as plain JSON, as `plutil -convert json` writes it: dictionaries (in order),
    /// arrays, strings, numbers and Booleans, indented by two spaces.
    ///
    /// ```swift
    /// let value: PlistValue = ["name": "Ada", "tags": ["a"]]
    /// try value.jsonText()   // {\n  "name": "Ada",\n  "tags": [\n    "a"\n  ]\n}
    /// ```
    ///
    /// Dates, data, UIDs and non-finite reals have no JSON form; ``typedJSON()`` keeps them.
    ///
    /// - Throws: ``PlistError/Code/unencodable`` with the key path of the first such value in
    ///   ``PlistError/codingPath`` (`servers[2]/started` style).
    public func jsonText() throws(PlistError) -> String {
        var out: [UInt8] = []
        try PlainJSONWriter.write(self, path: "", indent: 0, datesAndDataAsText: false, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Writes plain JSON (see ``PlistValue/jsonText()``), or with `datesAndDataAsText` the JSON a
/// schema validator checks (``PlistValue/jsonInstanceText()``): dates as ISO 8601 strings, data
/// as base64 strings.
enum PlainJSONWriter {
    static func write(_ value: PlistValue, path: String, indent: Int, datesAndDataAsText: Bool, into out: inout [UInt8]) throws(PlistError) {
        let pad = Array(repeating: UInt8(ascii: " "), count: 2 * (indent + 1))
        let closePad = Array(repeating: UInt8(ascii: " "), count: 2 * indent)
        switch value {
        case .dictionary(let dict):
            guard !dict.isEmpty else { out += Array("{}".utf8); return }
            out += Array("{\n".utf8)
            for (i, (key, child)) in dict.enumerated() {
                out += pad
                TypedJSONWriter.appendString(key, into: &out)
                out += Array(": ".utf8)
                try write(child, path: path.isEmpty ? key : path + "/" + key, indent: indent + 1, datesAndDataAsText: datesAndDataAsText, into: &out)
                out += Array((i == dict.count - 1 ? "\n" : ",\n").utf8)
            }
            out += closePad + Array("}".utf8)
        case .array(let items):
            guard !items.isEmpty else { out += Array("[]".utf8); return }
            out += Array("[\n".utf8)
            for (i, child) in items.enumerated() {
                out += pad
                try write(child, path: path + "[\(i)]", indent: indent + 1, datesAndDataAsText: datesAndDataAsText, into: &out)
                out += Array((i == items.count - 1 ? "\n" : ",\n").utf8)
            }
            out += closePad + Array("]".utf8)
        case .string(let s): TypedJSONWriter.appendString(s, into: &out)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .integer(let i): out += Array("\(i)".utf8)
        case .real(let r) where r.isFinite:
            out += Array(r.description.utf8)  // `30.0` (it reads back as a real), `-0.0` (with its sign), `1e+20`
        case .date(let d) where datesAndDataAsText:
            guard let text = PlistDate.isoText(d.timeIntervalSinceReferenceDate, fraction: true) else {
                throw PlistError(.unencodable, "the date has no ISO 8601 form", codingPath: path)
            }
            TypedJSONWriter.appendString(text, into: &out)
        case .data(let d) where datesAndDataAsText: TypedJSONWriter.appendString(d.base64EncodedString(), into: &out)
        default:
            throw PlistError(.unencodable, "\(value.typeName) has no JSON form", codingPath: path)
        }
    }
}

extension PlistValue {
    /// The value as the JSON document a JSON Schema validator checks against a `PlistSchema` (SettingsFiles):
    /// plain JSON as ``jsonText()`` writes it, with dates as ISO 8601 strings
    /// (`"2026-01-31T09:30:00Z"`) and data as base64 strings, which have no plain JSON form.
    ///
    /// ```swift
    /// let value: PlistValue = ["seen": .date(Date(timeIntervalSinceReferenceDate: 0))]
    /// try value.jsonInstanceText()   // {\n  "seen": "2001-01-01T00:00:00Z"\n}
    /// ```
    ///
    /// - Throws: ``PlistError/Code/unencodable`` for a UID or a real that is not finite, with its
    ///   key path in ``PlistError/codingPath``.
    public func jsonInstanceText() throws(PlistError) -> String {
        var out: [UInt8] = []
        try PlainJSONWriter.write(self, path: "", indent: 0, datesAndDataAsText: true, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
