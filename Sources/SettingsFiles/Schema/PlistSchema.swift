#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SettingsPlist

/// A JSON Schema (draft 2020-12) over property-list values: the subset a settings file needs,
/// checked without recursion, with messages that name the key path, the value and the rule.
///
/// The schema is a JSON document read as a property list (objects as dictionaries, whole
/// numbers as integers). A value is checked as its JSON form, the one `PlistValue/jsonInstanceText()`
/// writes: dictionaries are objects, arrays arrays, integers and reals numbers, Booleans
/// Booleans, and dates and data are strings (ISO 8601 and base64).
///
/// Keywords that constrain values: `type` (a name or a list of names: `object`, `array`,
/// `string`, `integer`, `number`, `boolean`, `null`), `enum`, `const`, `minimum`, `maximum`,
/// `exclusiveMinimum`, `exclusiveMaximum`, `properties`, `additionalProperties` (a Boolean or a
/// schema), `required`, `items` (one schema for every element), `format: "date-time"` (the
/// value must be a plist `<date>`) and `contentEncoding: "base64"` (a plist `<data>`).
/// Annotations are accepted and not checked: `$schema`, `$id`, `$comment`, `title`,
/// `description`, `default`, `examples`, `readOnly`, `writeOnly`, `deprecated`, any other
/// `format`, and every keyword that starts with `x-` (`x-secret`, `x-formerly`). Any other
/// keyword (`$ref`, `anyOf`, `pattern`...) is refused when the schema is read, so a rule is
/// never silently not checked.
///
/// ```swift
/// let schema = try PlistSchema([
///     "type": "object",
///     "properties": ["Network": ["type": "object", "properties": [
///         "timeout": ["type": "number", "minimum": 1, "maximum": 120]]]],
/// ])
/// schema.violations(of: ["Network": ["timeout": 500]]).map(\.description)
/// // ["key 'Network/timeout': 500 does not fit \"maximum\": 120"]
/// ```
public struct PlistSchema: Sendable, Equatable {
    /// The name of the schema file in a settings file's companion directory
    /// (``PlistFile/companionDirectory(for:)``): the one place it is spelled.
    public static let fileName = "schema.json"

    /// The largest schema file read, in bytes (4 MiB); a schema is kilobytes.
    public static let maximumFileSize = 4 << 20

    /// The schema document.
    public let root: PlistValue

    /// A schema document that cannot be used: a keyword this validator does not implement, or
    /// a keyword whose value has the wrong form.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// Where in the schema, as a JSON Pointer (`/properties/Network/properties/timeout`).
        public var pointer: String
        /// What is wrong.
        public var message: String
        /// `"schema at /pointer: message"`.
        public var description: String { "schema at \(pointer.isEmpty ? "/" : pointer): \(message)" }
    }

    /// A value that does not fit the schema.
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        /// The key path of the value, `/` between keys and `[i]` for array elements
        /// (`servers[2]/host`); empty for the whole document.
        public var keyPath: String
        /// The value as shown in messages (`500`, `"blue"`, `a dict of 3 keys`, `<redacted>` for
        /// a secret).
        public var value: String
        /// The rule it breaks, as written in the schema (`"maximum": 120`).
        public var rule: String
        /// `key 'Network/timeout': 500 does not fit "maximum": 120`.
        public var description: String {
            (keyPath.isEmpty ? "the document" : "key '\(keyPath)'") + ": \(value) does not fit \(rule)"
        }
    }

    /// Reads a schema document, refusing keywords this validator does not implement.
    ///
    /// - Parameter root: the schema, an object (dictionary) or a Boolean schema.
    /// - Throws: ``Invalid`` naming the place in the schema and the keyword.
    public init(_ root: PlistValue) throws(Invalid) {
        try Self.check(root)
        self.root = root
    }

    // MARK: Checking the schema

    /// The keywords that are checked (each with the form its value must have).
    private static let assertions: Set<String> = [
        "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "properties", "additionalProperties", "required", "items", "format", "contentEncoding",
    ]
    /// The keywords that are annotations only.
    private static let annotations: Set<String> = [
        "$schema", "$id", "$comment", "title", "description", "default", "examples",
        "readOnly", "writeOnly", "deprecated",
    ]
    private static let typeNames: Set<String> = ["object", "array", "string", "integer", "number", "boolean", "null"]

    /// Checks every schema in the document, iteratively (nesting is input).
    private static func check(_ root: PlistValue) throws(Invalid) {
        var pending: [(PlistValue, String)] = [(root, "")]
        while let (node, pointer) = pending.popLast() {
            let schema: PlistDictionary
            switch node {
            case .bool: continue
            case .dictionary(let d): schema = d
            default: throw Invalid(pointer: pointer, message: "a schema must be an object or a Boolean, not \(describe(node))")
            }
            for (keyword, value) in schema {
                let at = pointer + "/" + pointerEscaped(keyword)
                if keyword.hasPrefix("x-") || annotations.contains(keyword) { continue }
                guard assertions.contains(keyword) else {
                    throw Invalid(pointer: at, message: "the keyword '\(keyword)' is not supported (supported: \(assertions.sorted().joined(separator: ", ")), annotations and x- keywords)")
                }
                switch keyword {
                case "type":
                    let names = value.arrayValue ?? [value]
                    for name in names where !typeNames.contains(name.stringValue ?? "") {
                        throw Invalid(pointer: at, message: "'type' must name JSON types (\(typeNames.sorted().joined(separator: ", "))), not \(describe(name))")
                    }
                case "enum":
                    guard value.arrayValue != nil else { throw Invalid(pointer: at, message: "'enum' must be an array") }
                case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
                    guard number(value) != nil else { throw Invalid(pointer: at, message: "'\(keyword)' must be a number") }
                case "properties":
                    guard case .dictionary(let properties) = value else { throw Invalid(pointer: at, message: "'properties' must be an object") }
                    for (name, child) in properties.reversed() { pending.append((child, at + "/" + pointerEscaped(name))) }
                case "additionalProperties", "items":
                    pending.append((value, at))
                case "required":
                    guard let names = value.arrayValue, names.allSatisfy({ $0.stringValue != nil }) else {
                        throw Invalid(pointer: at, message: "'required' must be an array of strings")
                    }
                case "format":
                    guard value.stringValue != nil else { throw Invalid(pointer: at, message: "'format' must be a string") }
                case "contentEncoding":
                    guard value.stringValue == "base64" else {
                        throw Invalid(pointer: at, message: "only \"contentEncoding\": \"base64\" is supported (plist <data>), not \(describe(value))")
                    }
                default: break  // const: any value
                }
            }
        }
    }

    /// A JSON Pointer token: `~` as `~0`, `/` as `~1`.
    private static func pointerEscaped(_ token: String) -> String {
        token.replacing("~", with: "~0").replacing("/", with: "~1")
    }

    /// The schema that applies to the value at a key path: the `properties` entry (or the
    /// `additionalProperties` schema) at each level, or `nil` when nothing specific applies.
    ///
    /// ```swift
    /// schema.subschema(at: ["Network", "timeout"])?["type"]   // "number"
    /// ```
    ///
    /// - Parameter keyPath: the keys from the root, one per dictionary level.
    /// - Returns: the schema for that value, or `nil`.
    public func subschema(at keyPath: [String]) -> PlistValue? {
        var node = root
        for key in keyPath {
            if let property = node["properties"]?[key] {
                node = property
            } else if case .dictionary? = node["additionalProperties"], let additional = node["additionalProperties"] {
                node = additional
            } else {
                return nil
            }
        }
        return node
    }

    // MARK: Validating values

    /// Every place where `value` does not fit the schema, in document order.
    ///
    /// ```swift
    /// let schema = try PlistSchema(["properties": ["theme": ["enum": ["light", "dark"]]]])
    /// schema.violations(of: ["theme": "blue"]).first?.description
    /// // key 'theme': "blue" does not fit "enum": ["light", "dark"]
    /// ```
    ///
    /// - Parameter value: the document, usually a settings file's root dictionary.
    /// - Returns: the violations; empty when the value fits.
    public func violations(of value: PlistValue) -> [Violation] {
        violations(of: value, showingSecrets: false)
    }

    /// ``violations(of:)``; with `showingSecrets`, secret values are described as they are, not
    /// `<redacted>` (to tell two violations apart, never to print them).
    package func violations(of value: PlistValue, showingSecrets: Bool) -> [Violation] {
        var found: [Violation] = []
        var pending: [(schema: PlistValue, value: PlistValue, path: String, secret: Bool)] = [(root, value, "", false)]
        while let (node, value, path, inheritedSecret) = pending.popLast() {
            guard case .dictionary(let schema) = node else {
                if node == .bool(false) { found.append(Violation(keyPath: path, value: Self.shown(value, secret: inheritedSecret && !showingSecrets), rule: "the schema false")) }
                continue
            }
            let secret = inheritedSecret || schema["x-secret"] == .bool(true)
            func fail(_ keyword: String) {
                found.append(Violation(keyPath: path, value: Self.shown(value, secret: secret && !showingSecrets), rule: Self.rule(keyword, schema[keyword] ?? .bool(true))))
            }
            if let type = schema["type"] {
                let names = (type.arrayValue ?? [type]).compactMap(\.stringValue)
                guard names.contains(where: { Self.fits(value, type: $0) }) else { fail("type"); continue }
            }
            if let options = schema["enum"]?.arrayValue, !options.contains(where: { Self.jsonEqual($0, value) }) { fail("enum") }
            if let constant = schema["const"], !Self.jsonEqual(constant, value) { fail("const") }
            if let number = Self.number(value) {
                for keyword in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                    guard let bound = schema[keyword].flatMap(Self.number) else { continue }
                    let order = Self.compare(number, bound)
                    let fits = switch keyword {
                    case "minimum": order >= 0
                    case "maximum": order <= 0
                    case "exclusiveMinimum": order > 0
                    default: order < 0
                    }
                    if !fits { fail(keyword) }
                }
            }
            switch value {
            case .date, .data, .string:
                if schema["format"] == "date-time", !Self.isDate(value) { fail("format") }
                if schema["contentEncoding"] != nil, !Self.isData(value) { fail("contentEncoding") }
            case .dictionary(let dictionary):
                let properties = schema["properties"]?.dictionaryValue ?? PlistDictionary()
                for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where dictionary[name] == nil {
                    found.append(Violation(keyPath: path, value: Self.shown(value, secret: secret && !showingSecrets),
                                           rule: Self.rule("required", schema["required"] ?? []) + " (no key '\(name)')"))
                }
                var children: [(PlistValue, PlistValue, String, Bool)] = []
                for (key, child) in dictionary {
                    let childPath = path.isEmpty ? EscapedPath.escape(key, separator: "/") : path + "/" + EscapedPath.escape(key, separator: "/")
                    let childSecret = secret || PlistSecrets.isSecretName(key)
                    if let property = properties[key] {
                        children.append((property, child, childPath, childSecret))
                    } else if let additional = schema["additionalProperties"] {
                        guard additional != .bool(false) else {
                            found.append(Violation(keyPath: childPath, value: Self.shown(child, secret: childSecret && !showingSecrets),
                                                   rule: "\"additionalProperties\": false (no key '\(key)' in \"properties\")"))
                            continue
                        }
                        children.append((additional, child, childPath, childSecret))
                    }
                }
                pending.append(contentsOf: children.reversed())
            case .array(let items):
                guard let itemSchema = schema["items"] else { break }
                for (index, item) in items.enumerated().reversed() {
                    pending.append((itemSchema, item, path + "[\(index)]", secret))
                }
            default: break
            }
        }
        return found
    }

    /// Whether `value`'s JSON form has the JSON Schema type `name`.
    private static func fits(_ value: PlistValue, type name: String) -> Bool {
        switch (name, value) {
        case ("object", .dictionary), ("array", .array), ("boolean", .bool),
             ("string", .string), ("string", .date), ("string", .data): true
        case ("integer", .integer): true
        case ("integer", .real(let r)): r.isFinite && r.rounded(.towardZero) == r
        case ("number", .integer): true
        case ("number", .real(let r)): r.isFinite
        default: false
        }
    }

    private static func isDate(_ value: PlistValue) -> Bool {
        if case .date = value { true } else { false }
    }

    private static func isData(_ value: PlistValue) -> Bool {
        if case .data = value { true } else { false }
    }

    /// A number as JSON Schema compares them: integers exactly, reals as reals.
    private enum Number {
        case integer(PlistInteger)
        case real(Double)
    }

    private static func number(_ value: PlistValue) -> Number? {
        switch value {
        case .integer(let i): .integer(i)
        case .real(let r) where r.isFinite: .real(r)
        default: nil
        }
    }

    /// -1, 0 or 1 as `a` is below, equal to or above `b`.
    private static func compare(_ a: Number, _ b: Number) -> Int {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .real(let y)): return compare(x.doubleValue, y)
        case (.real(let x), .integer(let y)): return compare(x, y.doubleValue)
        case (.real(let x), .real(let y)): return compare(x, y)
        }
    }

    private static func compare(_ x: Double, _ y: Double) -> Int { x < y ? -1 : (x == y ? 0 : 1) }

    /// JSON equality: numbers by value (`1` equals `1.0`), everything else exactly.
    private static func jsonEqual(_ a: PlistValue, _ b: PlistValue) -> Bool {
        if let x = number(a), let y = number(b) { return compare(x, y) == 0 }
        return a == b
    }

    // MARK: Messages

    /// A value as messages show it: scalars as JSON, containers by size.
    static func describe(_ value: PlistValue) -> String {
        switch value {
        case .string(let s):
            var out: [UInt8] = []
            TypedJSONWriter.appendString(s, into: &out)
            return String(decoding: out, as: UTF8.self)
        case .integer(let i): return i.description
        case .real(let r): return r.description
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return "the date " + PlistDate.iso8601(d.timeIntervalSinceReferenceDate, fraction: true)
        case .data(let d): return "\(d.count) bytes of data"
        case .array(let a): return "an array of \(a.count) item\(a.count == 1 ? "" : "s")"
        case .dictionary(let d): return "a dict of \(d.count) key\(d.count == 1 ? "" : "s")"
        case .uid(let u): return "the UID \(u)"
        }
    }

    private static func shown(_ value: PlistValue, secret: Bool) -> String {
        secret ? PlistSecrets.redactedText : describe(value)
    }

    /// A keyword and its value as written in the schema: `"maximum": 120`, `"enum": ["a", "b"]`.
    private static func rule(_ keyword: String, _ value: PlistValue) -> String {
        let text: String
        if let items = value.arrayValue {
            text = "[" + items.map(describe).joined(separator: ", ") + "]"
        } else {
            text = describe(value)
        }
        return "\"\(keyword)\": \(text)"
    }
}
