#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import SettingsPlist

// The types settings store out of the box, each in the plist form a person editing the file
// would expect. Enums with raw values and other `Codable` types need no conformance: the
// `@Setting` initialisers in Setting+Conversions.swift store them as their raw value or as a
// nested plist value.

extension Bool: SettingsValue {
    /// Stored as `<true/>` / `<false/>`; nothing else reads as a Bool.
    public static var settingsTransformer: SettingsTransformer<Bool> {
        SettingsTransformer(typeName: "Bool", encode: { .bool($0) }, decode: { $0.boolValue })
    }
}

extension String: SettingsValue {
    /// Stored as `<string>`.
    public static var settingsTransformer: SettingsTransformer<String> {
        SettingsTransformer(typeName: "String", encode: { .string($0) }, decode: { $0.stringValue })
    }
}

// MARK: - Numbers

/// Integers of every width are stored as `<integer>` and range-checked on read: a stored value
/// that does not fit is a type mismatch (the default is used), never a trap. `UInt64` values
/// above `Int64.max` are stored exactly.
extension Int: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<Int> { .integer }
}

extension Int8: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<Int8> { .integer }
}

extension Int16: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<Int16> { .integer }
}

extension Int32: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<Int32> { .integer }
}

extension Int64: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<Int64> { .integer }
}

extension UInt: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<UInt> { .integer }
}

extension UInt8: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<UInt8> { .integer }
}

extension UInt16: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<UInt16> { .integer }
}

extension UInt32: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<UInt32> { .integer }
}

extension UInt64: SettingsValue {
    /// Stored as `<integer>`; see ``SettingsTransformer/integer``.
    public static var settingsTransformer: SettingsTransformer<UInt64> { .integer }
}

extension Double: SettingsValue {
    /// Stored as `<real>`. Reads a `<real>`, or an `<integer>` that a Double holds exactly
    /// (`<integer>30</integer>` for a timeout is fine; 2⁵³ + 1 is a mismatch, not a rounding).
    public static var settingsTransformer: SettingsTransformer<Double> {
        SettingsTransformer(
            typeName: "Double",
            encode: { .real($0) },
            decode: { plist in
                switch plist {
                case .real(let real): return real
                case .integer(let integer): return try exactFloatingPoint(integer, as: Double.self)
                default: return nil
                }
            }
        )
    }
}

extension Float: SettingsValue {
    /// Stored as the `<real>` with the Float's shortest decimal digits (`0.1`, not
    /// `0.10000000149011612`), which reads back as the same Float. Reads a `<real>` within
    /// Float's range (rounded to the nearest Float), or an `<integer>` a Float holds exactly.
    public static var settingsTransformer: SettingsTransformer<Float> {
        SettingsTransformer(
            typeName: "Float",
            encode: { .real(readableDouble($0)) },
            decode: { plist in
                switch plist {
                case .real(let real):
                    let value = Float(real)
                    if value.isFinite || !real.isFinite { return value }
                    throw TransformFailure("\(real) is outside Float's range")
                case .integer(let integer):
                    return try exactFloatingPoint(integer, as: Float.self)
                default:
                    return nil
                }
            }
        )
    }

    /// The Double with `value`'s shortest decimal digits when it converts back to exactly
    /// `value` (it nearly always does), else `value` widened exactly.
    private static func readableDouble(_ value: Float) -> Double {
        guard value.isFinite, let short = Double(value.description), Float(short) == value else { return Double(value) }
        return short
    }
}

/// `integer` as `T` when `T` holds it exactly, else a failure saying so.
private func exactFloatingPoint<T: BinaryFloatingPoint>(_ integer: PlistInteger, as type: T.Type) throws(TransformFailure) -> T {
    let exact: T? = if let signed = integer.int64Value { T(exactly: signed) } else { integer.uint64Value.flatMap { T(exactly: $0) } }
    guard let exact else { throw TransformFailure("\(integer) has no exact \(T.self) value") }
    return exact
}

// MARK: - Foundation types

extension Date: SettingsValue {
    /// Stored as `<date>` (whole seconds in XML files, exact in binary ones).
    public static var settingsTransformer: SettingsTransformer<Date> {
        SettingsTransformer(typeName: "Date", encode: { .date($0) }, decode: { $0.dateValue })
    }
}

extension Data: SettingsValue {
    /// Stored as `<data>` (base64 in XML files).
    public static var settingsTransformer: SettingsTransformer<Data> {
        SettingsTransformer(typeName: "Data", encode: { .data($0) }, decode: { $0.dataValue })
    }
}

extension URL: SettingsValue {
    /// Stored as a `<string>` holding its `absoluteString`, as MFDynamic and `Codable`'s `URL` store
    /// it: `https://example.com/a`, and a file URL as `file:///Users/ada/My%20Files/`, so a string
    /// setting is never mistaken for a URL one.
    ///
    /// Reading takes that, and a plain path too (a file written by hand or by an older version):
    /// a string starting with `/` is a file path (a directory when it ends in `/`), anything else
    /// is parsed as a URL string. A relative URL is stored resolved against its base.
    public static var settingsTransformer: SettingsTransformer<URL> {
        SettingsTransformer(
            typeName: "URL",
            encode: { url in .string(url.absoluteString) },
            decode: { plist in
                guard case .string(let text) = plist else { return nil }
                guard let url = url(from: text) else { throw TransformFailure("\(String(reflecting: text)) is not a URL") }
                return url
            }
        )
    }

    private static func url(from text: String) -> URL? {
        guard text.hasPrefix("/") else { return URL(string: text) }
        // A plain path, never looked up on disk.
        return URL(filePath: text, directoryHint: text.hasSuffix("/") ? .isDirectory : .notDirectory)
    }
}

extension UUID: SettingsValue {
    /// Stored as its `uuidString` (`<string>E621E1F8-C36C-495A-93FC-0C247A3E6E5F</string>`);
    /// lowercase reads too.
    public static var settingsTransformer: SettingsTransformer<UUID> {
        SettingsTransformer(
            typeName: "UUID",
            encode: { .string($0.uuidString) },
            decode: { plist in
                guard case .string(let text) = plist else { return nil }
                guard let uuid = UUID(uuidString: text) else { throw TransformFailure("\(String(reflecting: text)) is not a UUID") }
                return uuid
            }
        )
    }
}

// MARK: - Containers

extension Array: SettingsValue where Element: SettingsValue {
    /// Stored as `<array>`, each element as its own type is (a transformer registered for the
    /// element type applies to the elements too).
    public static var settingsTransformer: SettingsTransformer<[Element]> {
        let element = ComponentTransformer(builtIn: Element.settingsTransformer)
        return .arrayTransformer(typeName: "[\(element.builtIn.typeName)]", element: element.resolver)
    }
}

extension Dictionary: SettingsValue where Key == String, Value: SettingsValue {
    /// Stored as `<dict>` with its keys sorted, each value as its own type is (a transformer
    /// registered for the value type applies to the values too).
    public static var settingsTransformer: SettingsTransformer<[String: Value]> {
        let element = ComponentTransformer(builtIn: Value.settingsTransformer)
        return .dictionaryTransformer(typeName: "[String: \(element.builtIn.typeName)]", element: element.resolver)
    }
}

/// The built-in types whose own transformer stores a value as one `PlistValue` case. A setting
/// of such a type that uses that transformer, with no rules, while no transformer is registered
/// for the type (``SettingsTransformers``), writes the case directly: no conversion closures, no
/// context (``SettingBox/write(_:)``). `SettingWritePathTests` checks each case against the
/// type's transformer.
@usableFromInline
enum BuiltInScalar: Sendable {
    case bool, int, double, string, date, data

    /// The case for `type`, or `nil` when it is not one of these types.
    @usableFromInline init?(_ type: Any.Type) {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(Bool.self): self = .bool
        case ObjectIdentifier(Int.self): self = .int
        case ObjectIdentifier(Double.self): self = .double
        case ObjectIdentifier(String.self): self = .string
        case ObjectIdentifier(Date.self): self = .date
        case ObjectIdentifier(Data.self): self = .data
        default: return nil
        }
    }

    /// What the type's transformer stores for `value`; `nil` when `value` is not of this case's
    /// type, or (an `Int` never is) cannot be stored as it is.
    ///
    /// Inlinable: where `Value` is known, the one cast that can succeed is no cast at all.
    @inlinable func plist<Value>(_ value: Value) -> PlistValue? {
        switch self {
        case .bool: (value as? Bool).map(PlistValue.bool)
        case .int: (value as? Int).flatMap { PlistInteger(exactly: $0) }.map(PlistValue.integer)
        case .double: (value as? Double).map(PlistValue.real)
        case .string: (value as? String).map(PlistValue.string)
        case .date: (value as? Date).map(PlistValue.date)
        case .data: (value as? Data).map(PlistValue.data)
        }
    }
}
