#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Encodes `Encodable` values as property lists: to a ``PlistValue``, or to XML or binary bytes.
///
/// ```swift
/// struct Server: Codable { var host: String; var port: UInt16 }
///
/// var encoder = PlistEncoder()
/// encoder.outputFormat = .binary
/// let data = try encoder.encode([Server(host: "a.example", port: 443)])
/// let tree = try encoder.encodeToValue(Server(host: "b.example", port: 80))
/// // ["host": "b.example", "port": 80]
/// ```
///
/// Types map as in Foundation's `PropertyListEncoder`: `Date` becomes `<date>`, `Data` becomes
/// `<data>`, numbers and strings their plist types, `Int`-keyed dictionaries dictionaries with
/// the keys as strings, enums with associated values nested dictionaries. A `URL` becomes its
/// `absoluteString`, which reads better in a settings file than Foundation's `relative` dictionary.
/// Dictionary entries keep the order in which they were encoded, which for synthesised `Codable`
/// is the order of declaration.
///
/// Plists have no null, so `nil` is written this way:
/// - in a keyed container (an optional property), by leaving the key out;
/// - in an unkeyed container (`[Int?]`) and at the top level, as the string `"$null"`, the marker
///   Foundation's `PropertyListEncoder` uses; ``PlistDecoder`` reads it back as `nil`. (A
///   `String?` whose value is literally `"$null"` therefore reads back as `nil`, as with Foundation.)
///
/// Scalars may be encoded at the top level (`try encoder.encodeToValue(42)`).
public struct PlistEncoder: Sendable {
    /// The byte format ``encode(_:)`` produces: XML (the default) or binary.
    public var outputFormat: PlistFormat
    /// Values handed to the types being encoded as `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - outputFormat: the format of ``encode(_:)``'s bytes.
    ///   - userInfo: context for the encoded types' `encode(to:)`.
    public init(outputFormat: PlistFormat = .xml, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.outputFormat = outputFormat
        self.userInfo = userInfo
    }

    /// Encodes `value` as property-list bytes in ``outputFormat``.
    ///
    /// ```swift
    /// try PlistEncoder().encode(settings).write(to: url, options: .atomic)
    /// ```
    ///
    /// - Parameter value: the value to encode.
    /// - Returns: the plist's bytes.
    /// - Throws: ``PlistError/Code/unencodable`` (with the coding path) when the value cannot be
    ///   represented, or when its own `encode(to:)` throws.
    public func encode<T: Encodable>(_ value: T) throws(PlistError) -> Data {
        try encodeToValue(value).encoded(as: outputFormat)
    }

    /// Encodes `value` as a plist value in memory.
    ///
    /// ```swift
    /// let tree = try PlistEncoder().encodeToValue(["b": 2, "a": 1])
    /// ```
    ///
    /// - Parameter value: the value to encode.
    /// - Returns: the plist tree.
    /// - Throws: ``PlistError/Code/unencodable`` with the coding path, e.g. for an `Int128` beyond
    ///   a plist integer's range, a type that encodes nothing at the top level, or an error thrown
    ///   by the value's own `encode(to:)`.
    public func encodeToValue<T: Encodable>(_ value: T) throws(PlistError) -> PlistValue {
        let encoder = PlistValueEncoder(parent: nil, key: nil, userInfo: userInfo)
        do {
            return try encoder.encodeTopLevel(value)
        } catch {
            throw PlistError.coding(error, at: [], fallback: .unencodable)
        }
    }
}
