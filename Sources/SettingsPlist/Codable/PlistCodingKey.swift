#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The coding keys the plist coders make themselves: array positions and `super`.
///
/// An enum rather than a struct so that it fits an existential's inline buffer: pushing one on a
/// coding path never allocates.
enum PlistCodingKey: CodingKey, Sendable {
    /// An element of an array (unkeyed container).
    case index(Int)
    /// A named entry, such as `super`.
    case name(String)

    /// The key `superDecoder()` and `superEncoder()` use, as Foundation's coders do.
    static let superKey = PlistCodingKey.name("super")

    init(stringValue: String) { self = .name(stringValue) }
    init(intValue: Int) { self = .index(intValue) }

    var stringValue: String {
        switch self {
        case .index(let i): "Index \(i)"
        case .name(let s): s
        }
    }

    var intValue: Int? {
        if case .index(let i) = self { return i }
        return nil
    }
}

/// Renders coding paths the way a reader would write them: `servers[2].port`.
enum CodingPathText {
    /// The path as text: array positions as `[n]`, plain keys joined by dots, other keys quoted
    /// in brackets (`labels["two words"]`) so that a dot inside a key cannot mislead.
    static func render(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let own = key as? PlistCodingKey, case .index(let i) = own {
                out += "[\(i)]"
                continue
            }
            let name = key.stringValue
            if isPlain(name) {
                if !out.isEmpty { out += "." }
                out += name
            } else {
                out += "[\(String(reflecting: name))]"
            }
        }
        return out
    }

    /// Whether `name` can be written bare: ASCII letters, digits, `_`, `-`, `$` and `/` only.
    static func isPlain(_ name: String) -> Bool {
        guard !name.isEmpty else { return false }
        return name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x5F || c == 0x2D || c == 0x24 || c == 0x2F
        }
    }
}

/// A conversion that failed before its coding path was known; the container that asked for the
/// conversion adds the path. Carrying it as a plain struct keeps the successful path free of any
/// path bookkeeping.
struct CodingFailure: Error {
    let code: PlistError.Code
    let message: String
    /// The array element that failed, when a whole array was converted at once.
    private(set) var elementIndex: Int?

    init(_ code: PlistError.Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The same failure, inside element `index` of an array.
    func atElement(_ index: Int) -> CodingFailure {
        var copy = self
        copy.elementIndex = index
        return copy
    }

    /// The path from the converted value to the failure: empty, or the failing element.
    var elementPath: [any CodingKey] {
        elementIndex.map { [PlistCodingKey.index($0)] } ?? []
    }

    /// `expected X, found Y` for a value of the wrong plist type.
    static func mismatch(expected: String, found value: PlistValue, note: String? = nil) -> CodingFailure {
        var message = "expected \(expected), found \(value.codingSummary)"
        if let note { message += " (\(note))" }
        return CodingFailure(.typeMismatch, message)
    }

    /// The public error, located at `path`.
    func located(at path: [any CodingKey]) -> PlistError {
        PlistError(code, message, codingPath: CodingPathText.render(path))
    }
}

extension PlistValue {
    /// The value as error messages name it: its plist type and a short preview,
    /// e.g. `string "abc"`, `integer 300`, `dict (3 keys)`.
    var codingSummary: String {
        switch self {
        case .string(let s):
            let preview = s.unicodeScalars.count > 40 ? String(s.unicodeScalars.prefix(40)) + "…" : s
            return "string \(String(reflecting: preview))"
        case .integer(let i): return "integer \(i)"
        case .real(let d): return "real \(d)"
        case .bool(let b): return "bool \(b)"
        case .date(let d): return "date \(PlistDate.iso8601(d.timeIntervalSinceReferenceDate, fraction: true))"
        case .data(let d): return "data (\(d.count) \(d.count == 1 ? "byte" : "bytes"))"
        case .array(let a): return "array (\(a.count) \(a.count == 1 ? "element" : "elements"))"
        case .dictionary(let d): return "dict (\(d.count) \(d.count == 1 ? "key" : "keys"))"
        case .uid(let u): return "uid \(u)"
        }
    }
}

extension PlistError {
    /// Converts any error thrown while coding into a ``PlistError``: ours pass through,
    /// `DecodingError`/`EncodingError` keep their path and description, others are wrapped.
    ///
    /// - Parameters:
    ///   - error: what was thrown.
    ///   - path: where it was thrown, for errors that carry no path of their own.
    ///   - fallback: the code for errors of unknown kind.
    static func coding(_ error: any Error, at path: @autoclosure () -> [any CodingKey], fallback: Code) -> PlistError {
        if let own = error as? PlistError { return own }
        if let decoding = error as? DecodingError { return converting(decoding) }
        if let encoding = error as? EncodingError { return converting(encoding) }
        return PlistError(fallback, String(describing: error), codingPath: CodingPathText.render(path()))
    }

    private static func converting(_ error: DecodingError) -> PlistError {
        switch error {
        case .typeMismatch(_, let context):
            return located(.typeMismatch, context.debugDescription, context.codingPath)
        case .valueNotFound(_, let context):
            return located(.missingValue, context.debugDescription, context.codingPath)
        case .keyNotFound(let key, let context):
            return located(.missingValue, "missing key \(String(reflecting: key.stringValue))", context.codingPath + [key])
        case .dataCorrupted(let context):
            return located(.invalidValue, context.debugDescription, context.codingPath)
        @unknown default:
            return PlistError(.invalidValue, String(describing: error))
        }
    }

    private static func converting(_ error: EncodingError) -> PlistError {
        switch error {
        case .invalidValue(_, let context):
            return located(.unencodable, context.debugDescription, context.codingPath)
        @unknown default:
            return PlistError(.unencodable, String(describing: error))
        }
    }

    private static func located(_ code: Code, _ message: String, _ path: [any CodingKey]) -> PlistError {
        PlistError(code, message, codingPath: CodingPathText.render(path))
    }
}
