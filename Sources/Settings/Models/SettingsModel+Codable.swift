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
    /// since it was written get their defaults. Only what does not decode is replaced, each
    /// reported in `issues`: a field takes its default (`nil` for an optional without one), and
    /// an array element or a string-keyed dictionary entry is left out (the others are kept).
    /// The cost stays linear in the size of `dictionary`, however many values fail.
    ///
    /// - Parameters:
    ///   - dictionary: the archived fields.
    ///   - issues: receives a ``ModelFieldIssue`` per field that did not decode.
    public static func unarchive(_ dictionary: PlistDictionary, issues: inout [ModelFieldIssue]) -> Self {
        let template = Self()
        let defaults = (try? template.archive()) ?? PlistDictionary()
        // Fields missing at the top take their defaults here; below the top, only the
        // recovering pass fills missing keys from the defaults, and only where a keyed
        // container asks for them: laying defaults over nested dictionaries here would add the
        // default case's key to a stored enum case (two keys: undecodable) and bring back
        // entries the user removed from a dictionary.
        var merged = defaults
        for (key, value) in dictionary { merged[key] = value }
        let decoder = PlistDecoder()
        // Transient properties take their values from `Self()` while decoding.
        var transients: [String: any Sendable] = [:]
        for child in Mirror(reflecting: template).children {
            if let label = child.label, let value = child.value as? any TransientProperty {
                transients[label.hasPrefix("_") ? String(label.dropFirst()) : label] = value
            }
        }
        // The usual case first: everything decodes.
        if let model = try? TransientDefaults.$current.withValue(transients, operation: {
            try decoder.decode(Self.self, from: .dictionary(merged))
        }) {
            return model
        }
        // Then once more, falling back value by value (one pass, however many fail).
        do {
            let (model, recovered) = try TransientDefaults.$current.withValue(transients) {
                try decoder.decodeRecovering(Self.self, from: .dictionary(merged), defaults: .dictionary(defaults))
            }
            issues += recovered.map(ModelFieldIssue.init(recovered:))
            return model
        } catch {
            let plistError = error as? PlistError
            issues.append(ModelFieldIssue(field: plistError?.codingPath ?? "", message: plistError?.message ?? "\(error)", location: []))
            return Self()
        }
    }
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
