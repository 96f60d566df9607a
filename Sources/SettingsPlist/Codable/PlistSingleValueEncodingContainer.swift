#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Stores the encoder's value as one scalar, for `encode(to:)` of wrapper types.
struct PlistSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: PlistValueEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    /// Stores the `"$null"` marker: this is `nil` where no key can be left out.
    mutating func encodeNil() throws { try encoder.setSingle(.string(plistNullMarker)) }

    mutating func encode(_ value: Bool) throws { try encoder.setSingle(.bool(value)) }
    mutating func encode(_ value: String) throws { try encoder.setSingle(.string(value)) }
    mutating func encode(_ value: Double) throws { try encoder.setSingle(.real(value)) }
    mutating func encode(_ value: Float) throws { try encoder.setSingle(.real(Double(value))) }
    mutating func encode(_ value: Int) throws { try integer(value) }
    mutating func encode(_ value: Int8) throws { try integer(value) }
    mutating func encode(_ value: Int16) throws { try integer(value) }
    mutating func encode(_ value: Int32) throws { try integer(value) }
    mutating func encode(_ value: Int64) throws { try integer(value) }
    mutating func encode(_ value: Int128) throws { try integer(value) }
    mutating func encode(_ value: UInt) throws { try integer(value) }
    mutating func encode(_ value: UInt8) throws { try integer(value) }
    mutating func encode(_ value: UInt16) throws { try integer(value) }
    mutating func encode(_ value: UInt32) throws { try integer(value) }
    mutating func encode(_ value: UInt64) throws { try integer(value) }
    mutating func encode(_ value: UInt128) throws { try integer(value) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ value: T) throws {
        try encoder.setSingle(plistInteger(value, at: codingPath))
    }

    /// Encodes `value` in place of this one, at the same coding path.
    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.setSingle(encoder.encodeNested(value, key: nil))
    }
}
