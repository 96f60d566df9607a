#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The canonical typed JSON form of a property list: every value an object with one key naming
/// its type, so nothing is lost (integers stay exact, `-0.0`, NaN and dates survive, key order kept).
///
/// ```json
/// {"dict": [["name", {"string": "Ada"}], ["launches", {"int": 42}], ["when", {"date": "2001-01-01T00:00:00.5Z"}]]}
/// ```
///
/// A date is ISO-8601 UTC text in the proleptic Gregorian calendar with the shortest fraction
/// that reads back to the same double. A date that no such text carries is `"nan"`, `"inf"`,
/// `"-inf"`, or its seconds since 2001-01-01T00:00:00Z as a JSON number (`{"date": 1e+300}`).
extension PlistValue {
    /// The value as canonical typed JSON, on one line.
    ///
    /// ```swift
    /// let value: PlistValue = ["volume": 0.8]
    /// value.typedJSON()   // {"dict": [["volume", {"real": 0.8}]]}
    /// ```
    public func typedJSON() -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        TypedJSONWriter.write(self, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads canonical typed JSON (as printed by ``typedJSON()``).
    ///
    /// ```swift
    /// let value = try PlistValue(typedJSON: Array(#"{"int": 7}"#.utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - options: nesting limit.
    /// - Throws: ``PlistError`` with the line and column of malformed JSON or of a value that is
    ///   not canonical typed JSON.
    public init(typedJSON bytes: some Sequence<UInt8>, options: PlistReadOptions = .init()) throws(PlistError) {
        let array = Array(bytes)
        self = try array.withUnsafeBufferPointer { buffer throws(PlistError) in
            var reader = TypedJSONReader(buffer, maximumDepth: options.maximumDepth)
            return try reader.readDocument()
        }
    }
}
