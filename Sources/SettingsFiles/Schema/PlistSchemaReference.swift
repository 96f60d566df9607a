public import SettingsPlist

/// A settings schema (`schema.json`, as `SettingsSchema` writes it) as a reference table an
/// application can ship: one Markdown section per group, one row per key in the schema's order.
///
/// ```swift
/// let text = PlistSchemaReference.markdown(of: document)
/// // | Key | Title | Type | Default | Description |
/// // |---|---|---|---|---|
/// // | `Network/timeout` | Timeout | number | `30.0` | Seconds to wait for a server. |
/// ```
public enum PlistSchemaReference {
    /// One key of the schema, flattened out of its namespaces.
    public struct Entry: Sendable, Equatable {
        /// The key path (`/` between namespaces).
        public var key: String
        /// The key's schema object.
        public var schema: PlistDictionary
    }

    /// Every key of a schema document, in `x-order` (document order where it has none),
    /// without recursion on the depth of its namespaces.
    public static func entries(of document: PlistValue) -> [Entry] {
        var entries: [Entry] = []
        var pending: [([String], PlistDictionary)] = []
        if case .dictionary(let root)? = document["properties"] { pending.append(([], root)) }
        while !pending.isEmpty {
            let (prefix, properties) = pending.removeFirst()
            for (name, value) in properties {
                guard case .dictionary(let schema) = value else { continue }
                let path = prefix + [name]
                if schema["type"]?.stringValue == "object", schema["x-order"] == nil, case .dictionary(let nested)? = schema["properties"] {
                    pending.append((path, nested))
                } else {
                    entries.append(Entry(key: path.map { EscapedPath.escape($0, separator: "/") }.joined(separator: "/"), schema: schema))
                }
            }
        }
        let indexed = entries.enumerated().map { ($0.element, $0.element.schema["x-order"]?.intValue ?? Int.max, $0.offset) }
        return indexed.sorted { ($0.1, $0.2) < ($1.1, $1.2) }.map(\.0)
    }

    /// The Markdown reference: the document's title as a heading, then per group (`x-group`,
    /// in order of first appearance) a table of key, title, type, default, and description
    /// (with the allowed values and their titles, the range, and "locked by FILE").
    public static func markdown(of document: PlistValue) -> String {
        var out = "# \(cell(document["title"]?.stringValue ?? "Settings"))\n"
        var groups: [String] = []
        var rows: [String: [String]] = [:]
        for entry in entries(of: document) {
            let group = entry.schema["x-group"]?.stringValue ?? ""
            if rows[group] == nil { groups.append(group) }
            rows[group, default: []].append(row(entry))
        }
        for group in groups {
            out += "\n" + (group.isEmpty ? "" : "## \(cell(group))\n\n")
            out += "| Key | Title | Type | Default | Description |\n|---|---|---|---|---|\n"
            out += (rows[group] ?? []).joined()
        }
        return out
    }

    private static func row(_ entry: Entry) -> String {
        let schema = entry.schema
        var notes: [String] = []
        if let text = schema["description"]?.stringValue { notes.append(cell(text)) }
        if let allowed = schema["enum"]?.arrayValue {
            let titles = schema["x-enum-titles"]?.arrayValue?.compactMap(\.stringValue)
            let shown = allowed.enumerated().map { index, value in
                let title = titles.flatMap { index < $0.count ? " (\(cell($0[index])))" : nil } ?? ""
                return "`\(code(value))`" + title
            }
            notes.append("One of: " + shown.joined(separator: ", ") + ".")
        }
        if let minimum = schema["minimum"], let maximum = schema["maximum"] {
            notes.append("From `\(code(minimum))` to `\(code(maximum))`.")
        }
        if schema["readOnly"]?.boolValue == true, let file = schema["x-locked-by"]?.stringValue {
            notes.append("Locked by `\(cell(file))`.")
        }
        let type = [schema["type"]?.stringValue, schema["format"]?.stringValue].compactMap { $0 }.joined(separator: ", ")
        let defaultText = schema["default"].map { "`\(code($0))`" } ?? ""
        return "| `\(cell(entry.key))` | \(cell(schema["title"]?.stringValue ?? "")) | \(type) | \(defaultText) | \(notes.joined(separator: " ")) |\n"
    }

    /// A value in its literal form on one line (runs of white space as one space), fit for a
    /// table cell.
    private static func code(_ value: PlistValue) -> String {
        cell(value.literalText).split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ").replacingBackticks
    }

    /// Text fit for a table cell: `|` escaped, line breaks as spaces.
    private static func cell(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "|": out += "\\|"
            case "\n", "\r", "\r\n": out += " "
            default: out.append(character)
            }
        }
        return out
    }
}

extension String {
    /// The text with backticks replaced by `'`, so it stays inside one code span.
    fileprivate var replacingBackticks: String { String(map { $0 == "`" ? "'" : $0 }) }
}
