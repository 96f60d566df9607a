#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes the entries of a dictionary for `encode(to:)`, in the order they are encoded.
struct PlistKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: PlistValueEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    /// Leaves the key out (removing a value encoded for it earlier): a plist has no null.
    mutating func encodeNil(forKey key: Key) throws { encoder.removeEntry(key.stringValue) }

    mutating func encode(_ value: Bool, forKey key: Key) throws { encoder.setEntry(.bool(value), for: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { encoder.setEntry(.string(value), for: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws { encoder.setEntry(.real(value), for: key.stringValue) }
    mutating func encode(_ value: Float, forKey key: Key) throws { encoder.setEntry(.real(Double(value)), for: key.stringValue) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try integer(value, key) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ value: T, _ key: Key) throws {
        encoder.setEntry(try plistInteger(value, at: codingPath + [key]), for: key.stringValue)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        encoder.setEntry(try encoder.encodeNested(value, key: key), for: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(PlistKeyedEncodingContainer<NestedKey>(encoder: encoder.pendingEntry(key, kind: .dictionary)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        PlistUnkeyedEncodingContainer(encoder: encoder.pendingEntry(key, kind: .array))
    }

    /// An encoder for the entry `"super"`, as Foundation's encoders use.
    mutating func superEncoder() -> any Encoder {
        encoder.pendingEntry(PlistCodingKey.superKey, kind: .empty)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.pendingEntry(key, kind: .empty)
    }
}
