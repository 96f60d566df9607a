public import SettingsPlist
/// Where one key's value comes from in a stack of plist layers: every layer's value for the key,
/// top to bottom, which one wins, and why there is none. The text and JSON that a program's
/// `explain` and the `settings explain` tool print, built in one place.
///
/// ```swift
/// let report = SettingsExplanation(key: "Network/timeout", rows: [
///     .init(layer: "volatile", source: "environment variable MYAPP_NETWORK__TIMEOUT", value: nil),
///     .init(layer: "user", source: "/home/ada/.config/App/settings.plist", value: 60),
///     .init(layer: "defaults", source: "Defaults.plist", value: 30),
/// ])
/// print(report)
/// // Network/timeout = 60 (from user: /home/ada/.config/App/settings.plist)
/// //   volatile  environment variable MYAPP_NETWORK__TIMEOUT: not set
/// // * user      /home/ada/.config/App/settings.plist: 60
/// //   defaults  Defaults.plist: 30
/// ```
public struct SettingsExplanation: Hashable, Sendable, CustomStringConvertible {
    /// One place a value for the key can come from.
    public struct Row: Hashable, Sendable {
        /// The layer's name (`volatile`, `overrides`, `user`, `defaults`, or another layer's).
        public var layer: String
        /// Where in the layer: a file's path, an environment variable, `in code`.
        public var source: String
        /// The value there, or `nil` when the source has none.
        public var value: PlistValue?
        /// More about the value: who set it, the old name it was found under.
        public var notes: [String]

        /// Creates a row.
        ///
        /// - Parameters:
        ///   - layer: the layer's name.
        ///   - source: where in the layer.
        ///   - value: the value there, or `nil`.
        ///   - notes: more about the value.
        public init(layer: String, source: String, value: PlistValue?, notes: [String] = []) {
            self.layer = layer
            self.source = source
            self.value = value
            self.notes = notes
        }
    }

    /// The key path.
    public var key: String
    /// Every source, highest first.
    public var rows: [Row]
    /// The key's earlier names (it is read under them when absent).
    public var formerly: [String]
    /// The rules applied on read, by name.
    public var rules: [String]
    /// Why the key has no value, when no row has one and more can be said (the namespace
    /// missing, or a value where a namespace should be).
    public var missingReason: String?

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - key: the key path.
    ///   - rows: every source, highest first.
    ///   - formerly: the key's earlier names.
    ///   - rules: the rules applied on read.
    ///   - missingReason: why there is no value.
    public init(key: String, rows: [Row], formerly: [String] = [], rules: [String] = [], missingReason: String? = nil) {
        self.key = key
        self.rows = rows
        self.formerly = formerly
        self.rules = rules
        self.missingReason = missingReason
    }

    /// The index of the row whose value wins: the first one that has a value.
    public var winner: Int? { rows.firstIndex { $0.value != nil } }

    /// The value reads see, or `nil` (a namespace's value is merged with the layers below by a
    /// store; this is the winning row's own value).
    public var value: PlistValue? { winner.flatMap { rows[$0].value } }

    /// The report with every value under a secret-named key (password, token, apiKey…) shown
    /// as `<redacted>`, as the `settings` tool prints them.
    public var redacted: SettingsExplanation {
        let secret = key.split(separator: "/").contains { PlistSecrets.isSecretName(String($0)) }
        var copy = self
        for index in copy.rows.indices {
            copy.rows[index].value = copy.rows[index].value.map { PlistSecrets.redacting($0, pathIsSecret: secret) }
        }
        return copy
    }

    /// The human text, with secret values redacted (see ``text(showingSecrets:)``).
    public var description: String { text(showingSecrets: false) }

    /// The human text: the key and its value first, then one line per source (`*` marks the
    /// winner), the old names and the rules.
    ///
    /// - Parameter showingSecrets: whether values under secret-named keys are printed (else
    ///   they are `<redacted>`, as ``redacted`` has them).
    /// - Returns: the text, one line per fact, no final newline.
    public func text(showingSecrets: Bool) -> String {
        if !showingSecrets { return redacted.text(showingSecrets: true) }
        var lines: [String] = []
        if let winner {
            let row = rows[winner]
            lines.append("\(key) = \(Self.text(row.value)) (from \(row.layer): \(row.source))")
        } else {
            lines.append("\(key): no value in any layer" + (missingReason.map { " (\($0))" } ?? ""))
        }
        let width = rows.map(\.layer.count).max() ?? 0
        for (index, row) in rows.enumerated() {
            let mark = index == winner ? "* " : "  "
            let value = row.value.map(Self.text) ?? "not set"
            let notes = row.notes.isEmpty ? "" : " (" + row.notes.joined(separator: "; ") + ")"
            lines.append(mark + row.layer.padding(to: width) + "  " + row.source + ": " + value + notes)
        }
        if !formerly.isEmpty {
            lines.append("renamed: formerly " + formerly.map { "'\($0)'" }.joined(separator: ", ") + "; read under those names when '\(key)' is absent")
        }
        if !rules.isEmpty { lines.append("rules on read: " + rules.joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }

    /// The report as a plist dictionary, for `--json`: `key`, `value` (absent when none),
    /// `layer` (the winner's), `rows` (each `layer`, `source`, `value`, `notes`, `wins`),
    /// `formerly`, `rules`, `missingReason`.
    public var plist: PlistValue {
        var dict = PlistDictionary()
        dict["key"] = .string(key)
        if let winner {
            dict["value"] = rows[winner].value
            dict["layer"] = .string(rows[winner].layer)
            dict["source"] = .string(rows[winner].source)
        }
        dict["rows"] = .array(rows.enumerated().map { index, row in
            var entry = PlistDictionary()
            entry["layer"] = .string(row.layer)
            entry["source"] = .string(row.source)
            if let value = row.value { entry["value"] = value }
            entry["wins"] = .bool(index == winner)
            if !row.notes.isEmpty { entry["notes"] = .array(row.notes.map(PlistValue.string)) }
            return .dictionary(entry)
        })
        if !formerly.isEmpty { dict["formerly"] = .array(formerly.map(PlistValue.string)) }
        if !rules.isEmpty { dict["rules"] = .array(rules.map(PlistValue.string)) }
        if let missingReason { dict["missingReason"] = .string(missingReason) }
        return .dictionary(dict)
    }

    /// The report as JSON (``plist`` through `PlistValue/typedJSON()`'s plain cousin): dates
    /// and data, which plain JSON cannot hold, are given as their property-list text.
    public var jsonText: String {
        (try? plist.jsonText()) ?? (try? Self.jsonSafe(plist).jsonText()) ?? "{}"
    }

    /// `value` with dates, data and non-finite reals replaced by their literal text.
    private static func jsonSafe(_ value: PlistValue) -> PlistValue {
        // The report's own nesting is fixed (rows, then one value); only a value can be deep, and
        // its literal text is what replaces it, so this walks at most three levels.
        switch value {
        case .dictionary(let dict):
            var out = PlistDictionary()
            for (key, child) in dict {
                out[key] = key == "value" ? jsonSafeValue(child) : jsonSafe(child)
            }
            return .dictionary(out)
        case .array(let items):
            return .array(items.map(jsonSafe))
        default:
            return jsonSafeValue(value)
        }
    }

    /// A value JSON can hold as it is, else its literal text.
    private static func jsonSafeValue(_ value: PlistValue) -> PlistValue {
        (try? value.jsonText()) != nil ? value : .string(value.literalText)
    }

    /// A value as `settings read` prints it: a string bare, anything else as a literal.
    private static func text(_ value: PlistValue?) -> String {
        guard let value else { return "not set" }
        if case .string(let text) = value { return text == PlistSecrets.redactedText ? text : value.literalText }
        return value.displayText.contains("\n") ? value.literalText.replacingNewlines : value.displayText
    }
}

extension String {
    /// The string padded with spaces to `width` characters.
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    /// Newlines and the indentation after them folded to single spaces (a dictionary on one line).
    fileprivate var replacingNewlines: String {
        split(separator: "\n").map { $0.drop { $0 == " " || $0 == "\t" } }.joined(separator: " ")
    }
}
