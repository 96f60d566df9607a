public import SettingsPlist
import Synchronization

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

