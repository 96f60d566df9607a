public import SettingsPlist
public import Synchronization

/// Converts a Swift type to and from the plist value it is stored as.
///
/// Built-in types have one (see ``SettingsValue``); register your own for a type globally with
/// ``SettingsTransformers/register(_:)``, or give one to a single setting:
///
/// ```swift
/// let celsius = SettingsTransformer<Temperature>(
///     typeName: "Temperature",
///     encode: { .real($0.celsius) },
///     decode: { $0.doubleValue.map(Temperature.init(celsius:)) }
/// )
/// @Setting("outside", default: Temperature(celsius: 20), transformer: celsius) var outside
/// ```
public struct SettingsTransformer<Value>: Sendable {
    /// The name used in diagnostics, e.g. `Int` or `SettingsColor`.
    public let typeName: String
    @usableFromInline let encodeValue: @Sendable (Value) throws -> PlistValue
    @usableFromInline let decodeValue: @Sendable (PlistValue) throws -> Value?

    /// Creates a transformer.
    ///
    /// - Parameters:
    ///   - typeName: the name used in diagnostics.
    ///   - encode: the plist form of a value (human-readable where possible).
    ///   - decode: the value for a plist form, or `nil` when the stored value has the wrong type
    ///     (the read then falls back to the default and reports it).
    public init(
        typeName: String,
        encode: @escaping @Sendable (Value) throws -> PlistValue,
        decode: @escaping @Sendable (PlistValue) throws -> Value?
    ) {
        self.typeName = typeName
        self.encodeValue = encode
        self.decodeValue = decode
    }

    /// The plist form of `value`.
    ///
    /// - Throws: whatever the transformer's encode closure throws.
    @inlinable public func encode(_ value: Value) throws -> PlistValue { try encodeValue(value) }

    /// The value for a plist form.
    ///
    /// - Parameters:
    ///   - plist: the stored value.
    ///   - key: the key, named in the error.
    ///   - source: the layer it came from, named in the error.
    /// - Throws: ``SettingsError`` with code ``SettingsError/Code/typeMismatch`` naming both types.
    public func decode(_ plist: PlistValue, key: SettingsKey? = nil, source: SettingsLayer? = nil) throws(SettingsError) -> Value {
        let decoded: Value?
        do {
            decoded = try decodeValue(plist)
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(.typeMismatch, key: key, expectedType: typeName, foundType: plist.typeName, source: source, detail: "\(error)")
        }
        guard let decoded else {
            throw SettingsError(.typeMismatch, key: key, expectedType: typeName, foundType: plist.typeName, source: source)
        }
        return decoded
    }
}

/// A type with a built-in way to be stored in settings: what `@Setting`, `@ReadOnlySetting`,
/// `@Archived`, ``SettingsStore/Key`` and ``SettingsStore/value(_:default:)`` accept.
///
/// Enums with raw values and `Codable` types conform with no code, as in Defaults: the
/// transformer comes from a protocol extension.
///
/// ```swift
/// enum Theme: String, SettingsValue { case light, dark }            // stored as "light" / "dark"
/// struct Profile: Codable, Sendable, SettingsValue { var name = "" } // stored as a <dict>
/// ```
///
/// Any other type says how it is stored:
///
/// ```swift
/// extension Point: SettingsValue {
///     static var settingsTransformer: SettingsTransformer<Point> {
///         SettingsTransformer(typeName: "Point",
///             encode: { ["x": .real($0.x), "y": .real($0.y)] },
///             decode: { v in
///                 guard let x = v["x"]?.doubleValue, let y = v["y"]?.doubleValue else { return nil }
///                 return Point(x: x, y: y)
///             })
///     }
/// }
/// ```
public protocol SettingsValue {
    /// How values of this type are stored.
    static var settingsTransformer: SettingsTransformer<Self> { get }
}

extension SettingsValue where Self: RawRepresentable & Sendable, RawValue: SettingsValue & Sendable {
    /// An enum with raw values is stored as its raw value (``SettingsTransformer/rawValue``):
    /// `<string>dark</string>`.
    public static var settingsTransformer: SettingsTransformer<Self> { .rawValue }
}

extension SettingsValue where Self: Codable & Sendable {
    /// A `Codable` type is stored as a nested plist value (``SettingsTransformer/codable``): a
    /// struct as a `<dict>`, never opaque data.
    public static var settingsTransformer: SettingsTransformer<Self> { .codable }
}

extension SettingsValue where Self: RawRepresentable & Codable & Sendable, RawValue: SettingsValue & Sendable {
    /// An enum that has raw values and is `Codable` is stored as its raw value, as one without
    /// `Codable` is.
    public static var settingsTransformer: SettingsTransformer<Self> { .rawValue }
}

/// The global registry of transformers for types you do not own or want stored differently.
///
/// A registered transformer wins over the type's built-in one for every setting that does not
/// name its own transformer.
public enum SettingsTransformers {
    private static let registry = Mutex<[ObjectIdentifier: any Sendable]>([:])
    @usableFromInline static let version = Atomic<UInt64>(0)

    /// Registers `transformer` for its `Value` type, replacing any earlier registration.
    ///
    /// ```swift
    /// SettingsTransformers.register(SettingsTransformer<Date>(typeName: "Date (Unix seconds)",
    ///     encode: { .real($0.timeIntervalSince1970) },
    ///     decode: { $0.doubleValue.map(Date.init(timeIntervalSince1970:)) }))
    /// ```
    ///
    /// - Parameter transformer: the transformer.
    public static func register<Value>(_ transformer: SettingsTransformer<Value>) {
        registry.locked { $0[ObjectIdentifier(Value.self)] = transformer }
        version.add(1, ordering: .releasing)
    }

    /// Removes the registration for `type`, restoring its built-in transformer.
    ///
    /// - Parameter type: the type.
    public static func unregister<Value>(_ type: Value.Type) {
        registry.locked { $0[ObjectIdentifier(Value.self)] = nil }
        version.add(1, ordering: .releasing)
    }

    /// The registered transformer for `type`, if any.
    ///
    /// - Parameter type: the type.
    public static func registered<Value>(for type: Value.Type) -> SettingsTransformer<Value>? {
        registry.locked { $0[ObjectIdentifier(Value.self)] } as? SettingsTransformer<Value>
    }

    /// Changes whenever a registration changes (settings re-resolve their transformer then).
    @inlinable static var currentVersion: UInt64 { version.load(ordering: .acquiring) }
}
