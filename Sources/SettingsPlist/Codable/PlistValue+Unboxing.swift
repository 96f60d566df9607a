#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The string that stands for `nil` where a plist has no way to leave a value out (array
/// elements, a top-level value): the marker Foundation's `PropertyListEncoder` writes too.
let plistNullMarker = "$null"

/// Conversions from a plist value to the Swift types that `Decoder` containers hand out.
/// Each throws a ``CodingFailure`` that names the expected and found types; the caller adds the path.
extension PlistValue {
    /// Whether this is the `"$null"` marker that stands for `nil`.
    @inline(__always) var isNullMarker: Bool {
        if case .string(let s) = self { return s.utf8.count == 5 && s == plistNullMarker }
        return false
    }

    /// The Boolean: only a `<true/>`/`<false/>` counts, never a number or a string.
    @inline(__always) func unboxBool() throws(CodingFailure) -> Bool {
        if case .bool(let b) = self { return b }
        throw .mismatch(expected: "bool", found: self)
    }

    @inline(__always) func unboxString() throws(CodingFailure) -> String {
        if case .string(let s) = self { return s }
        throw .mismatch(expected: "string", found: self)
    }

    /// An integer of type `T`, range-checked. An integral real converts too when it is in range,
    /// as Foundation's decoder allows (`<real>3</real>` reads as the `Int` 3).
    @inline(__always) func unboxInteger<T: FixedWidthInteger>(_ type: T.Type) throws(CodingFailure) -> T {
        switch self {
        case .integer(let i):
            if let v = i.value(as: T.self) { return v }
        case .real(let d):
            if let v = T(exactly: d) { return v }
        default:
            break
        }
        throw integerFailure(T.self)
    }

    /// The failure for ``unboxInteger(_:)``, kept out of line: it is the cold path.
    @inline(never) func integerFailure<T: FixedWidthInteger>(_ type: T.Type) -> CodingFailure {
        let range = "out of range \(T.min)...\(T.max)"
        switch self {
        case .integer:
            return .mismatch(expected: "\(T.self)", found: self, note: range)
        case .real(let d) where d.isFinite && d.rounded(.towardZero) == d:
            return .mismatch(expected: "\(T.self)", found: self, note: range)
        default:
            return .mismatch(expected: "integer", found: self)
        }
    }

    /// A floating-point number: a real (a `Float` must be in range; precision may round), or an
    /// integer that `T` holds exactly.
    @inline(__always) func unboxFloatingPoint<T: BinaryFloatingPoint>(_ type: T.Type) throws(CodingFailure) -> T {
        switch self {
        case .real(let d):
            let v = T(d)
            if v.isFinite || !d.isFinite { return v }
            throw .mismatch(expected: "\(T.self)", found: self, note: "out of range")
        case .integer(let i):
            let exact = i.isNegative ? T(exactly: Int64(bitPattern: i.bits)) : T(exactly: i.bits)
            if let exact { return exact }
            throw .mismatch(expected: "\(T.self)", found: self, note: "not exactly representable")
        default:
            throw .mismatch(expected: "real", found: self)
        }
    }

    func unboxDate() throws(CodingFailure) -> Date {
        if case .date(let d) = self { return d }
        throw .mismatch(expected: "date", found: self)
    }

    func unboxData() throws(CodingFailure) -> Data {
        if case .data(let d) = self { return d }
        throw .mismatch(expected: "data", found: self)
    }

    /// A URL from its string (what ``PlistEncoder`` writes). The caller handles a dictionary,
    /// `URL`'s own `Codable` form (what Foundation's encoder writes).
    func unboxURL() throws(CodingFailure) -> URL {
        guard case .string(let s) = self else { throw .mismatch(expected: "string (URL)", found: self) }
        guard let url = URL(string: s) else {
            throw CodingFailure(.invalidValue, "expected URL, found \(codingSummary) (not a valid URL)")
        }
        return url
    }

    /// The elements of an array, each converted by `convert`; a failure names its element.
    @inline(__always)
    func unboxArray<Element>(_ convert: (PlistValue) throws(CodingFailure) -> Element) throws(CodingFailure) -> [Element] {
        guard case .array(let elements) = self else { throw .mismatch(expected: "array", found: self) }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for index in elements.indices {
            do {
                result.append(try convert(elements[index]))
            } catch {
                throw error.atElement(index)
            }
        }
        return result
    }
}
