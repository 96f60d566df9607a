// Plist values from Swift values held in variables; literals (`42`, `"text"`, `[1, 2]`) are
// covered by the `ExpressibleBy…Literal` conformances in PlistValue.swift.

extension PlistValue {
    /// An `<integer>`: `PlistValue(count)` instead of `.integer(PlistInteger(Int64(count)))`.
    ///
    /// ```swift
    /// for i in 0..<3 { store["item\(i)"] = PlistValue(i) }
    /// ```
    ///
    /// - Parameter value: the integer.
    @inlinable public init(_ value: Int) { self = .integer(PlistInteger(Int64(value))) }

    /// An `<integer>` from a 64-bit signed integer.
    ///
    /// - Parameter value: the integer.
    @inlinable public init(_ value: Int64) { self = .integer(PlistInteger(value)) }

    /// An `<integer>` from a 64-bit unsigned integer (values above `Int64.max` are kept exactly).
    ///
    /// - Parameter value: the integer.
    @inlinable public init(_ value: UInt64) { self = .integer(PlistInteger(value)) }

    /// A `<real>`.
    ///
    /// - Parameter value: the number.
    @inlinable public init(_ value: Double) { self = .real(value) }

    /// `<true/>` or `<false/>`.
    ///
    /// - Parameter value: the Boolean.
    @inlinable public init(_ value: Bool) { self = .bool(value) }

    /// A `<string>`.
    ///
    /// - Parameter value: the text.
    @inlinable public init(_ value: String) { self = .string(value) }
}
