#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Decodes `Decodable` values from property lists: from XML or binary bytes, or from a ``PlistValue``.
///
/// ```swift
/// struct Server: Codable { var host: String; var port: UInt16 }
/// struct Config: Codable { var servers: [Server]; var updated: Date? }
///
/// let config = try PlistDecoder().decode(Config.self, from: data)
/// ```
///
/// Types map as a plist reader expects: `Date` from `<date>`, `Data` from `<data>`, `URL` from a
/// string, `Bool` only from `<true/>`/`<false/>`. Integers of every width are range-checked
/// (300 into a `UInt8` is an error, never a trap); an integral `<real>` reads as an integer, and
/// `Float`/`Double` read from `<real>` or from an `<integer>` they hold exactly. An absent key
/// decodes as `nil` for optionals, and so does the string `"$null"`, which is how Foundation's
/// `PropertyListEncoder` (and ``PlistEncoder``, in arrays) writes `nil` where a value must stand.
///
/// Every failure is a ``PlistError`` whose ``PlistError/codingPath`` locates the value and whose
/// message names the expected and found types:
///
/// ```swift
/// // at servers[2].port: expected integer, found string "abc"
/// ```
///
/// The decoder reads the tree with no per-key allocation: a keyed lookup first tries the entry
/// after the previous one, since synthesised `Codable` decodes keys in declaration order.
public struct PlistDecoder: Sendable {
    /// Limits for reading bytes; ``PlistReadOptions/maximumDepth`` also bounds how deeply the
    /// decoder recurses, which matters for recursive types.
    public var options: PlistReadOptions
    /// Values handed to the types being decoded as `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - options: limits for hostile input.
    ///   - userInfo: context for the decoded types' `init(from:)`.
    public init(options: PlistReadOptions = PlistReadOptions(), userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.options = options
        self.userInfo = userInfo
    }

    /// Decodes a value of type `T` from XML or binary plist bytes (the format is detected).
    ///
    /// ```swift
    /// let settings = try PlistDecoder().decode(AppSettings.self, from: Data(contentsOf: url))
    /// ```
    ///
    /// - Parameters:
    ///   - type: the type to decode. A metatype naming a subclass (`Employee.self as
    ///     Person.Type`) decodes that subclass, as Foundation's decoder does.
    ///   - data: an XML or binary property list.
    /// - Returns: the decoded value.
    /// - Throws: ``PlistError``: a parse error with its position, or a Codable error
    ///   (``PlistError/Code/typeMismatch``, ``PlistError/Code/missingValue``,
    ///   ``PlistError/Code/invalidValue``) with its coding path.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from data: Data) throws(PlistError) -> T {
        let value = try PlistValue(decoding: data, options: options)
        return try decode(type, from: value)
    }

    /// Decodes a value of type `T` from a plist value already in memory.
    ///
    /// ```swift
    /// let port = try PlistDecoder().decode(UInt16.self, from: value["port"] ?? 0)
    /// ```
    ///
    /// - Parameters:
    ///   - type: the type to decode; a subclass's metatype decodes the subclass.
    ///   - value: the plist to read; any value, not only a dictionary.
    /// - Returns: the decoded value.
    /// - Throws: ``PlistError`` with the coding path of the value that did not fit.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from value: PlistValue) throws(PlistError) -> T {
        let decoder = PlistValueDecoder(value: value, path: [], maximumDepth: options.maximumDepth, userInfo: userInfo)
        do {
            return try decoder.decodeCurrentValue(as: type)
        } catch {
            throw PlistError.coding(error, at: decoder.path, fallback: .invalidValue)
        }
    }
}
