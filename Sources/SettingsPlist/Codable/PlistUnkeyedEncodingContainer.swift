#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Appends the elements of an array for `encode(to:)`.
struct PlistUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: PlistValueEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.elementCount }

    /// Appends the `"$null"` marker: an array cannot skip a position.
    mutating func encodeNil() throws { encoder.appendElement(.string(plistNullMarker)) }

    mutating func encode(_ value: Bool) throws { encoder.appendElement(.bool(value)) }
    mutating func encode(_ value: String) throws { encoder.appendElement(.string(value)) }
    mutating func encode(_ value: Double) throws { encoder.appendElement(.real(value)) }
    mutating func encode(_ value: Float) throws { encoder.appendElement(.real(Double(value))) }
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
        encoder.appendElement(try plistInteger(value, at: codingPath + [PlistCodingKey.index(count)]))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.appendElement(try encoder.encodeNested(value, key: PlistCodingKey.index(count)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(PlistKeyedEncodingContainer<NestedKey>(encoder: encoder.pendingElement(kind: .dictionary)))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        PlistUnkeyedEncodingContainer(encoder: encoder.pendingElement(kind: .array))
    }

    mutating func superEncoder() -> any Encoder {
        encoder.pendingElement(kind: .empty)
    }
}
