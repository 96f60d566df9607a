#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A property-list value: the typed tree that XML and binary plists decode to.
///
/// ```swift
/// let value: PlistValue = [
///     "name": "Ada",
///     "launches": 42,
///     "volume": 0.8,
///     "tags": ["a", "b"],
/// ]
/// value["launches"]?.intValue        // 42
/// value["tags"]?[1]?.stringValue     // "b"
/// let xml = try value.encoded(as: .xml)
/// ```
///
/// Equality is exact: strings and keys compare by code points, reals bit-for-bit (so `-0.0`
/// differs from `0.0`, and any NaN equals any NaN), dictionaries in key order.
public enum PlistValue: Sendable {
    /// A string (`<string>`).
    case string(String)
    /// An integer in `Int64.min ... UInt64.max` (`<integer>`).
    case integer(PlistInteger)
    /// A 64-bit floating-point number (`<real>`).
    case real(Double)
    /// A Boolean (`<true/>`, `<false/>`).
    case bool(Bool)
    /// A point in time (`<date>`), kept to the full precision of `Date`.
    case date(Date)
    /// Raw bytes (`<data>`).
    case data(Data)
    /// An ordered list (`<array>`).
    case array([PlistValue])
    /// String keys to values, in order (`<dict>`).
    case dictionary(PlistDictionary)
    /// A keyed-archiver object reference; only binary plists have it (XML writes a `CF$UID` dict).
    case uid(UInt64)
}

// MARK: - Equality

extension PlistValue: Hashable {
    public static func == (lhs: PlistValue, rhs: PlistValue) -> Bool {
        switch (lhs, rhs) {
        case let (.string(a), .string(b)): return CodePointKey.equal(a, b)
        case let (.integer(a), .integer(b)): return a == b
        case let (.real(a), .real(b)): return sameBits(a, b)
        case let (.bool(a), .bool(b)): return a == b
        case let (.date(a), .date(b)): return sameBits(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
        case let (.data(a), .data(b)): return a == b
        case let (.array(a), .array(b)): return equal(a, b)
        case let (.dictionary(a), .dictionary(b)): return a == b
        case let (.uid(a), .uid(b)): return a == b
        default: return false
        }
    }

    /// Whether two arrays of values are equal: through their storage, each element borrowed in
    /// place rather than copied out (retained and released) as `Array.==` does, and at once
    /// when they share storage.
    static func equal(_ lhs: [PlistValue], _ rhs: [PlistValue]) -> Bool {
        let count = lhs.count
        guard count == rhs.count else { return false }
        return lhs.withUnsafeBufferPointer { a in
            rhs.withUnsafeBufferPointer { b in
                if a.baseAddress == b.baseAddress { return true }
                for i in 0 ..< count where !(a[i] == b[i]) { return false }
                return true
            }
        }
    }

    /// Doubles (reals, and the seconds of dates) compare bit for bit, except that every NaN
    /// equals every NaN: `-0.0` differs from `0.0`, and equality stays reflexive.
    private static func sameBits(_ a: Double, _ b: Double) -> Bool {
        a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
    }

    private func canonicalBits(_ d: Double) -> UInt64 {
        d.isNaN ? Double.nan.bitPattern : d.bitPattern
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let s): hasher.combine(0); CodePointKey(s).hash(into: &hasher)
        case .integer(let i): hasher.combine(1); hasher.combine(i)
        case .real(let d): hasher.combine(2); hasher.combine(canonicalBits(d))
        case .bool(let b): hasher.combine(3); hasher.combine(b)
        case .date(let d): hasher.combine(4); hasher.combine(canonicalBits(d.timeIntervalSinceReferenceDate))
        case .data(let d): hasher.combine(5); hasher.combine(d)
        case .array(let a): hasher.combine(6); hasher.combine(a)
        case .dictionary(let d): hasher.combine(7); hasher.combine(d)
        case .uid(let u): hasher.combine(8); hasher.combine(u)
        }
    }
}

// MARK: - Typed accessors

extension PlistValue {
    /// The name of this value's type as plists spell it: `string`, `integer`, `real`, `bool`,
    /// `date`, `data`, `array`, `dict` or `uid`. Used in error messages.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dict"
        case .uid: "uid"
        }
    }

    /// The string, if this is a string.
    @inlinable public var stringValue: String? {
        if case .string(let v) = self { return v }
        return nil
    }

    /// The integer, if this is an integer.
    @inlinable public var integerValue: PlistInteger? {
        if case .integer(let v) = self { return v }
        return nil
    }

    /// The integer as `Int`, if this is an integer that fits.
    @inlinable public var intValue: Int? { integerValue?.intValue }

    /// The integer as `Int64`, if this is an integer that fits.
    @inlinable public var int64Value: Int64? { integerValue?.int64Value }

    /// The integer as `UInt64`, if this is a non-negative integer.
    @inlinable public var uint64Value: UInt64? { integerValue?.uint64Value }

    /// The number as `Double`: a real as it is, an integer converted. `nil` for other types.
    @inlinable public var doubleValue: Double? {
        switch self {
        case .real(let v): v
        case .integer(let v): v.doubleValue
        default: nil
        }
    }

    /// The Boolean, if this is a bool.
    @inlinable public var boolValue: Bool? {
        if case .bool(let v) = self { return v }
        return nil
    }

    /// The date, if this is a date.
    @inlinable public var dateValue: Date? {
        if case .date(let v) = self { return v }
        return nil
    }

    /// The bytes, if this is data.
    @inlinable public var dataValue: Data? {
        if case .data(let v) = self { return v }
        return nil
    }

    /// The elements, if this is an array.
    @inlinable public var arrayValue: [PlistValue]? {
        if case .array(let v) = self { return v }
        return nil
    }

    /// The entries, if this is a dictionary.
    @inlinable public var dictionaryValue: PlistDictionary? {
        if case .dictionary(let v) = self { return v }
        return nil
    }

    /// The object reference, if this is a UID.
    @inlinable public var uidValue: UInt64? {
        if case .uid(let v) = self { return v }
        return nil
    }

    /// The value for `key` if this is a dictionary that has it.
    public subscript(key: String) -> PlistValue? {
        dictionaryValue?[key]
    }

    /// The element at `index` if this is an array long enough.
    public subscript(index: Int) -> PlistValue? {
        guard case .array(let a) = self, a.indices.contains(index) else { return nil }
        return a[index]
    }
}

// MARK: - Literals

extension PlistValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension PlistValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .integer(PlistInteger(value)) }
}

extension PlistValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .real(value) }
}

extension PlistValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension PlistValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: PlistValue...) { self = .array(elements) }
}

extension PlistValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, PlistValue)...) {
        self = .dictionary(PlistDictionary(elements))
    }
}

// MARK: - Description

extension PlistValue: CustomStringConvertible {
    /// A compact, JSON-like rendering for logs and diagnostics.
    public var description: String {
        switch self {
        case .string(let s): return "\"\(s)\""
        case .integer(let i): return i.description
        case .real(let d): return "\(d)"
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return PlistDate.iso8601(d.timeIntervalSinceReferenceDate, fraction: true)
        case .data(let d): return "<\(d.count) bytes>"
        case .array(let a): return "[" + a.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let d): return d.description
        case .uid(let u): return "uid(\(u))"
        }
    }
}

extension PlistValue {
    /// The type name with its article, for messages: `an array`, `a string`.
    package var typeNameWithArticle: String {
        let name = typeName
        return (name.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + name
    }
}
