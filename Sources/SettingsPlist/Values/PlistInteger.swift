/// An integer as a property list stores it: any value in `Int64.min ... UInt64.max`.
///
/// Binary property lists keep values above `Int64.max` as 16-byte integers, so neither
/// `Int64` nor `UInt64` alone can hold every integer a plist may contain. `PlistInteger`
/// holds both ranges exactly and converts to the Swift integer types on request.
///
/// ```swift
/// let big = PlistInteger(UInt64.max)
/// big.int64Value      // nil: does not fit
/// big.uint64Value     // 18446744073709551615
/// PlistInteger(-5).int64Value   // -5
/// ```
public struct PlistInteger: Hashable, Sendable, Comparable {
    /// The value's bits: two's complement when ``isNegative`` is true, else the magnitude.
    @usableFromInline let bits: UInt64
    /// Whether the value is below zero.
    public let isNegative: Bool

    /// Creates an integer from a signed 64-bit value.
    @inlinable public init(_ value: Int64) {
        bits = UInt64(bitPattern: value)
        isNegative = value < 0
    }

    /// Creates an integer from an unsigned 64-bit value.
    @inlinable public init(_ value: UInt64) {
        bits = value
        isNegative = false
    }

    /// Creates an integer from any Swift integer, or `nil` when it is outside `Int64.min ... UInt64.max`.
    ///
    /// - Parameter value: the integer to convert.
    @inlinable public init?<T: BinaryInteger>(exactly value: T) {
        if value < 0 {
            guard let v = Int64(exactly: value) else { return nil }
            self.init(v)
        } else {
            guard let v = UInt64(exactly: value) else { return nil }
            self.init(v)
        }
    }

    /// The value as `Int64`, or `nil` when it is above `Int64.max`.
    @inlinable public var int64Value: Int64? {
        isNegative || bits <= UInt64(Int64.max) ? Int64(bitPattern: bits) : nil
    }

    /// The value as `UInt64`, or `nil` when it is negative.
    @inlinable public var uint64Value: UInt64? { isNegative ? nil : bits }

    /// The value as `Int`, or `nil` when it does not fit.
    @inlinable public var intValue: Int? {
        guard let v = int64Value else { return nil }
        return Int(exactly: v)
    }

    /// The value converted to `T`, or `nil` when it does not fit in `T`.
    ///
    /// ```swift
    /// PlistInteger(300).value(as: UInt8.self)   // nil
    /// PlistInteger(300).value(as: Int16.self)   // 300
    /// ```
    @inlinable public func value<T: FixedWidthInteger>(as type: T.Type) -> T? {
        isNegative ? T(exactly: Int64(bitPattern: bits)) : T(exactly: bits)
    }

    /// The nearest `Double`.
    @inlinable public var doubleValue: Double {
        isNegative ? Double(Int64(bitPattern: bits)) : Double(bits)
    }

    public static func < (lhs: PlistInteger, rhs: PlistInteger) -> Bool {
        if lhs.isNegative != rhs.isNegative { return lhs.isNegative }
        return lhs.isNegative
            ? Int64(bitPattern: lhs.bits) < Int64(bitPattern: rhs.bits)
            : lhs.bits < rhs.bits
    }
}

extension PlistInteger: ExpressibleByIntegerLiteral {
    /// Creates an integer from a literal.
    @inlinable public init(integerLiteral value: Int64) { self.init(value) }
}

extension PlistInteger: CustomStringConvertible {
    /// The decimal digits, with a leading `-` for negative values.
    public var description: String {
        isNegative ? String(Int64(bitPattern: bits)) : String(bits)
    }
}
