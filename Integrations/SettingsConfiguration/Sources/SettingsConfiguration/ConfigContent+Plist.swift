#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Configuration
public import Settings
public import SettingsPlist

// The one place values cross between the two models: PlistValue <-> ConfigContent.

extension ConfigContent {
    /// `value` as the content of type `type`, with the conversions swift-configuration's own
    /// property-list and JSON snapshots make: an integer, real or boolean is read as any of the
    /// three when it converts exactly (`Int` from `3.0`, `Bool` from `0` or `1`), an empty array
    /// as an array of any element type; a string is only a string, data only bytes.
    ///
    /// ```swift
    /// try ConfigContent(converting: .integer(42), to: .double, key: "timeout")   // .double(42)
    /// ```
    ///
    /// - Parameters:
    ///   - value: the stored value.
    ///   - type: the type asked for.
    ///   - key: the key it is stored at (for the error).
    ///   - source: the layer it came from (for the error).
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/typeMismatch`` naming the key, the
    ///   type stored and the type asked for.
    public init(converting value: PlistValue, to type: ConfigType, key: SettingsKey, source: SettingsLayer? = nil) throws(SettingsError) {
        func mismatch() -> SettingsError {
            SettingsError(.typeMismatch, key: key, expectedType: type.swiftTypeName, foundType: value.configTypeDescription, source: source)
        }
        func elements<T>(_ convert: (PlistValue) -> T?) throws(SettingsError) -> [T] {
            guard case .array(let items) = value else { throw mismatch() }
            var converted: [T] = []
            converted.reserveCapacity(items.count)
            for item in items {
                guard let element = convert(item) else { throw mismatch() }
                converted.append(element)
            }
            return converted
        }
        switch type {
        case .string:
            guard case .string(let text) = value else { throw mismatch() }
            self = .string(text)
        case .int:
            guard let int = value.exactInt else { throw mismatch() }
            self = .int(int)
        case .double:
            guard let double = value.exactDouble else { throw mismatch() }
            self = .double(double)
        case .bool:
            guard let bool = value.numericBool else { throw mismatch() }
            self = .bool(bool)
        case .bytes:
            guard case .data(let data) = value else { throw mismatch() }
            self = .bytes([UInt8](data))
        case .stringArray: self = .stringArray(try elements(\.stringValue))
        case .intArray: self = .intArray(try elements(\.exactInt))
        case .doubleArray: self = .doubleArray(try elements(\.exactDouble))
        case .boolArray: self = .boolArray(try elements(\.numericBool))
        case .byteChunkArray: self = .byteChunkArray(try elements { $0.dataValue.map { [UInt8]($0) } })
        }
    }

    /// The content as a property-list value.
    public var plistValue: PlistValue {
        switch self {
        case .string(let text): .string(text)
        case .int(let int): .integer(PlistInteger(Int64(int)))
        case .double(let double): .real(double)
        case .bool(let bool): .bool(bool)
        case .bytes(let bytes): .data(Data(bytes))
        case .stringArray(let items): .array(items.map(PlistValue.string))
        case .intArray(let items): .array(items.map { .integer(PlistInteger(Int64($0))) })
        case .doubleArray(let items): .array(items.map(PlistValue.real))
        case .boolArray(let items): .array(items.map(PlistValue.bool))
        case .byteChunkArray(let items): .array(items.map { .data(Data($0)) })
        }
    }
}

extension ConfigType {
    /// The Swift type a reader returns for it: `Int`, `[String]`, `[UInt8]`...
    var swiftTypeName: String {
        switch self {
        case .string: "String"
        case .int: "Int"
        case .double: "Double"
        case .bool: "Bool"
        case .bytes: "[UInt8]"
        case .stringArray: "[String]"
        case .intArray: "[Int]"
        case .doubleArray: "[Double]"
        case .boolArray: "[Bool]"
        case .byteChunkArray: "[[UInt8]]"
        }
    }

    /// The type to ask a provider for to get a value like `value` (`nil`: none fits, such as a
    /// date or a dictionary; an empty array is taken for strings).
    init?(like value: PlistValue) {
        switch value {
        case .string: self = .string
        case .integer: self = .int
        case .real: self = .double
        case .bool: self = .bool
        case .data: self = .bytes
        case .array(let items):
            switch items.first {
            case .string?: self = .stringArray
            case .integer?: self = .intArray
            case .real?: self = .doubleArray
            case .bool?: self = .boolArray
            case .data?: self = .byteChunkArray
            case nil: self = .stringArray  // empty: text is the likeliest
            default: return nil
            }
        default: return nil
        }
    }
}

extension PlistValue {
    /// An integer, or a real or boolean that is one exactly.
    var exactInt: Int? {
        switch self {
        case .integer(let n): n.intValue
        case .real(let d): Int(exactly: d)
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    /// A real, or an integer or boolean that is one exactly.
    var exactDouble: Double? {
        switch self {
        case .real(let d): d
        case .integer(let n): n.intValue.flatMap { Double(exactly: $0) }
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    /// A boolean, or a number read as one (non-zero is `true`).
    var numericBool: Bool? {
        switch self {
        case .bool(let b): b
        case .integer(let n): n.intValue.map { $0 != 0 }
        case .real(let d): d != 0
        default: nil
        }
    }

    /// The type of a stored value as a configuration reader would name it: `String`, `Int`,
    /// `[String]`, `Date`, `Dictionary`...
    var configTypeDescription: String {
        ConfigType(like: self)?.swiftTypeName ?? typeName
    }
}
