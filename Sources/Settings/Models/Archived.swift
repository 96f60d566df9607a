public import SettingsPlist
import Synchronization

/// A property of a model that is archived (MFDynamicStorage's marked fields): only properties
/// marked `@Archived` are saved and loaded; the others keep their initial values on load.
///
/// ```swift
/// struct Document: SettingsModel {
///     @Archived var title = "Untitled"          // archived as "title"
///     @Archived("Tint") var tint = SettingsColor(hex: "#336699")!
///     var isDirty = false                       // transient
/// }
/// ```
///
/// Values are stored as settings are: any ``SettingsValue`` type, enums with raw values and other
/// `Codable` types.
@propertyWrapper
public struct Archived<Value: Sendable>: Sendable {
    /// Holds the value; shared between copies of a model until one of them writes (copy on write).
    ///
    /// The value is behind a lock: the setter writes only storage it holds uniquely, but
    /// ``restore(from:field:)`` writes into the storage of the model `Self()` returned, which a
    /// model whose `init()` copies a shared template shares with that template (and so with
    /// whatever other threads read it).
    final class Storage: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }

        /// The value (a copy, read under the lock).
        var current: Value { value.locked { $0 } }
    }

    private var storage: Storage
    /// The key in the archive, or `nil` for the property name.
    let key: String?
    let transformer: SettingsTransformer<Value>

    /// The value.
    public var wrappedValue: Value {
        get { storage.current }
        set {
            if isKnownUniquelyReferenced(&storage) {
                storage.value.locked { $0 = newValue }
            } else {
                storage = Storage(newValue)
            }
        }
    }

    /// An archived property of a ``SettingsValue`` type.
    ///
    /// - Parameters:
    ///   - wrappedValue: the initial value (kept when the archive has none).
    ///   - key: the key in the archive; the property name when `nil`.
    public init(wrappedValue: Value, _ key: String? = nil) where Value: SettingsValue {
        self.init(wrappedValue: wrappedValue, key: key, transformer: Value.settingsTransformer)
    }

    /// An archived property of a `Codable` type, stored as a nested plist value.
    ///
    /// - Parameters:
    ///   - wrappedValue: the initial value (kept when the archive has none).
    ///   - key: the key in the archive; the property name when `nil`.
    @_disfavoredOverload
    public init(wrappedValue: Value, _ key: String? = nil) where Value: Codable {
        self.init(wrappedValue: wrappedValue, key: key, transformer: .codable)
    }

    /// An archived property stored through `transformer`.
    ///
    /// - Parameters:
    ///   - wrappedValue: the initial value (kept when the archive has none).
    ///   - key: the key in the archive; the property name when `nil`.
    ///   - transformer: how the value is stored.
    public init(wrappedValue: Value, key: String? = nil, transformer: SettingsTransformer<Value>) {
        self.storage = Storage(wrappedValue)
        self.key = key
        self.transformer = transformer
    }
}

/// What reflection sees of an ``Archived`` property.
protocol ArchivedField {
    var archiveKey: String? { get }
    func archivedValue() throws(SettingsError) -> PlistValue
    /// Sets the value from the archive (only on a model being unarchived).
    func restore(from value: PlistValue, field: String) throws(SettingsError)
}

extension Archived: ArchivedField {
    var archiveKey: String? { key }

    func archivedValue() throws(SettingsError) -> PlistValue {
        do {
            return try transformer.encode(storage.current)
        } catch {
            throw SettingsError(.typeMismatch, expectedType: transformer.typeName, detail: "cannot archive: \(error)")
        }
    }

    func restore(from value: PlistValue, field: String) throws(SettingsError) {
        let decoded = try transformer.decode(value, key: SettingsKey(components: [field]))
        storage.value.locked { $0 = decoded }
    }
}

extension SettingsModel {
    /// The ``Archived`` properties as a dictionary, in declaration order.
    ///
    /// - Throws: ``SettingsError`` (`.typeMismatch`) when a field cannot be stored, or when two
    ///   fields are archived under the same key (one would silently replace the other).
    public func archive() throws(SettingsError) -> PlistDictionary {
        var dictionary = PlistDictionary()
        for (key, field) in Self.archivedFields(of: self) {
            guard dictionary[key] == nil else {
                throw SettingsError(.typeMismatch, expectedType: "\(Self.self)", detail: "two @Archived fields use the key '\(key)'; give one another key")
            }
            dictionary[key] = try field.archivedValue()
        }
        return dictionary
    }

    /// A new model (`Self()`) with its ``Archived`` properties set from `dictionary`; missing
    /// ones keep their initial values, and each that does not decode keeps it and is reported.
    ///
    /// - Parameters:
    ///   - dictionary: the archived fields.
    ///   - issues: receives a ``ModelFieldIssue`` per field that did not decode.
    public static func unarchive(_ dictionary: PlistDictionary, issues: inout [ModelFieldIssue]) -> Self {
        let model = Self()
        for (key, field) in archivedFields(of: model) {
            guard let value = dictionary[key] else { continue }
            do {
                try field.restore(from: value, field: key)
            } catch {
                issues.append(ModelFieldIssue(field: key, message: error.description))
            }
        }
        return model
    }

    /// The archived properties of `model`, with their archive keys.
    static func archivedFields(of model: Self) -> [(String, any ArchivedField)] {
        Mirror(reflecting: model).children.compactMap { child in
            guard let field = child.value as? any ArchivedField else { return nil }
            let name = (child.label ?? "").hasPrefix("_") ? String((child.label ?? "").dropFirst()) : child.label ?? ""
            return (field.archiveKey ?? name, field)
        }
    }
}
