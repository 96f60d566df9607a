public import SettingsPlist

// `Codable` models: archived through the plist Codable bridge, decoded with evolution (missing
// fields get their defaults, fields that do not decode keep theirs and are reported).

extension SettingsModel where Self: Codable {
    /// The model encoded as a dictionary.
    ///
    /// - Throws: ``SettingsError`` (`.typeMismatch`) when it does not encode, or not as a dictionary.
    public func archive() throws(SettingsError) -> PlistDictionary {
        let value: PlistValue
        do {
            value = try PlistEncoder().encodeToValue(self)
        } catch {
            throw SettingsError(.typeMismatch, expectedType: "\(Self.self)", detail: "cannot archive: \(error)")
        }
        guard case .dictionary(let dictionary) = value else {
            throw SettingsError(.typeMismatch, expectedType: "a dictionary", foundType: value.typeName,
                                detail: "a model must encode as a keyed container")
        }
        return dictionary
    }

    /// Decodes the model, laying `dictionary` over the encoding of `Self()` so that fields added
    /// since it was written get their defaults; a field that does not decode is replaced by its
    /// default and reported in `issues`.
    ///
    /// - Parameters:
    ///   - dictionary: the archived fields.
    ///   - issues: receives a ``ModelFieldIssue`` per field that did not decode.
    public static func unarchive(_ dictionary: PlistDictionary, issues: inout [ModelFieldIssue]) -> Self {
        let template = Self()
        let defaults = (try? template.archive()) ?? PlistDictionary()
        var merged = dictionary.merged(over: defaults)
        let decoder = PlistDecoder()
        // Transient properties take their values from `Self()` while decoding.
        var transients: [String: any Sendable] = [:]
        for child in Mirror(reflecting: template).children {
            if let label = child.label, let value = child.value as? any TransientProperty {
                transients[label.hasPrefix("_") ? String(label.dropFirst()) : label] = value
            }
        }
        for _ in 0..<64 {
            do {
                return try TransientDefaults.$current.withValue(transients) {
                    try decoder.decode(Self.self, from: .dictionary(merged))
                }
            } catch let error as PlistError {
                // Fall back to the default for the outermost dictionary key on the failing path.
                let path = dictionaryKeys(of: error.codingPath ?? "")
                guard !path.isEmpty, let fallback = defaults.value(at: path), merged.value(at: path) != fallback else {
                    issues.append(ModelFieldIssue(field: error.codingPath ?? "", message: error.message))
                    return Self()
                }
                issues.append(ModelFieldIssue(field: path.joined(separator: "."), message: error.message))
                _ = merged.setValue(fallback, at: path[...])
            } catch {
                issues.append(ModelFieldIssue(field: "", message: "\(error)"))
                return Self()
            }
        }
        return Self()
    }
}

/// The leading dictionary keys of a rendered coding path (`servers[2].port` gives `servers`,
/// `window.zoom` gives `window`, `zoom`, `labels["a.b"]` gives `labels`, `a.b`).
func dictionaryKeys(of codingPath: String) -> [String] {
    var keys: [String] = []
    var rest = Substring(codingPath)
    while !rest.isEmpty {
        if rest.hasPrefix("[\"") {
            // A quoted key: ["..."] with \" and \\ escapes.
            var key = ""
            var i = rest.index(rest.startIndex, offsetBy: 2)
            var escaped = false
            while i < rest.endIndex {
                let c = rest[i]
                if escaped { key.append(c); escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { break } else { key.append(c) }
                i = rest.index(after: i)
            }
            keys.append(key)
            rest = rest[min(rest.index(i, offsetBy: 2, limitedBy: rest.endIndex) ?? rest.endIndex, rest.endIndex)...]
        } else if rest.hasPrefix("[") {
            return keys  // an array position: the dictionary path ends here
        } else {
            if rest.hasPrefix(".") { rest = rest.dropFirst() }
            let end = rest.firstIndex { $0 == "." || $0 == "[" } ?? rest.endIndex
            keys.append(String(rest[..<end]))
            rest = rest[end...]
        }
    }
    return keys
}

/// A property of a `Codable` model that is never archived: it keeps its initial value when the
/// model is loaded, and synthesized `Codable` code skips it (no hand-written `CodingKeys`).
///
/// ```swift
/// struct Profile: SettingsModel, Codable {
///     var name = "Guest"
///     @Transient var isEditing = false
/// }
/// ```
@propertyWrapper
public struct Transient<Value: Sendable>: Sendable {
    /// The value.
    public var wrappedValue: Value

    /// A transient property with its initial value.
    ///
    /// - Parameter wrappedValue: the value a loaded model starts with.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }
}

extension Transient: Equatable where Value: Equatable {
    public static func == (lhs: Transient, rhs: Transient) -> Bool { lhs.wrappedValue == rhs.wrappedValue }
}

extension Transient: Hashable where Value: Hashable {
    public func hash(into hasher: inout Hasher) { hasher.combine(wrappedValue) }
}

extension Transient: Codable where Value: Codable {
    /// Not called by synthesized code (the container overloads below skip the property); decodes
    /// the value when a `Transient` is decoded on its own.
    public init(from decoder: any Decoder) throws {
        self.init(wrappedValue: try Value(from: decoder))
    }

    /// Encodes the value when a `Transient` is encoded on its own.
    public func encode(to encoder: any Encoder) throws {
        try wrappedValue.encode(to: encoder)
    }
}

extension KeyedEncodingContainer {
    /// Skips a ``Transient`` property: it is not archived.
    public mutating func encode<Value: Encodable>(_ value: Transient<Value>, forKey key: Key) throws {}
}

extension KeyedDecodingContainer {
    /// A ``Transient`` property is never read from the archive: it gets the value it has in the
    /// model's `init()`.
    public func decode<Value: Decodable>(_ type: Transient<Value>.Type, forKey key: Key) throws -> Transient<Value> {
        if codingPath.isEmpty, let initial = TransientDefaults.current[key.stringValue] as? Transient<Value> {
            return initial
        }
        throw DecodingError.keyNotFound(key, DecodingError.Context(
            codingPath: codingPath,
            debugDescription: "@Transient '\(key.stringValue)' has no initial value here: mark transient properties on the model type itself"))
    }
}

/// Marks ``Transient`` for reflection.
protocol TransientProperty: Sendable {}
extension Transient: TransientProperty {}

/// The `Transient` properties of the model being decoded, by name, with their initial values.
enum TransientDefaults {
    @TaskLocal static var current: [String: any Sendable] = [:]
}
