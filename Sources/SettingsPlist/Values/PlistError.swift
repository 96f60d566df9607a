/// An error reading, writing or converting a property list, with where it happened.
///
/// Parse errors carry a ``Position``: line and column for XML, a byte offset for binary. Errors
/// from the file-level functions also carry the file's path, and Codable errors the coding path.
/// The ``description`` puts it all on one line, compiler style:
///
/// ```swift
/// do {
///     _ = try PlistValue(contentsOf: url)
/// } catch {
///     print(error)   // settings.plist:12:9: unknown element <integr>
/// }
/// ```
public struct PlistError: Error, Hashable, Sendable {
    /// The kind of problem, for callers that match on it.
    public enum Code: String, Hashable, Sendable {
        /// The input ended in the middle of a value.
        case unexpectedEnd
        /// The input is not well-formed (XML syntax, JSON syntax, stray text).
        case syntax
        /// An XML element that a property list cannot contain.
        case unknownElement
        /// A value whose text cannot be read as its type (integer, real, date, base64, entity).
        case invalidValue
        /// An integer outside `Int64.min ... UInt64.max` (or too wide for its binary form).
        case integerOverflow
        /// The data is neither an XML nor a binary property list.
        case unknownFormat
        /// A binary plist's header, trailer, offset table or object is invalid.
        case corruptBinary
        /// A binary plist object refers back to one of its own containers.
        case cycle
        /// A dictionary key that is not a string.
        case invalidKey
        /// Containers nested deeper than the reader's limit.
        case tooDeep
        /// Input whose value would be far larger than the input: a binary plist whose shared
        /// objects, counted once per reference, exceed the reader's expansion limit.
        case tooLarge
        /// A value that the chosen output format cannot represent.
        case unencodable
        /// A Codable value whose stored form has the wrong type.
        case typeMismatch
        /// A Codable value or key that is not present.
        case missingValue
        /// The file could not be read or written.
        case io
    }

    /// Where in the input the problem was found.
    public enum Position: Hashable, Sendable {
        /// A line and column in text input, both counted from 1 (columns in bytes).
        case line(Int, column: Int)
        /// A byte offset in binary input, counted from 0.
        case offset(Int)
    }

    /// The kind of problem.
    public var code: Code
    /// What went wrong, in words (without the position or file).
    public var message: String
    /// Where in the input, when known.
    public var position: Position?
    /// The file being read or written, when known.
    public var path: String?
    /// The Codable coding path (`"servers[2].port"` style), when the error came from a coder.
    public var codingPath: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of problem.
    ///   - message: what went wrong.
    ///   - position: where in the input.
    ///   - path: the file, if any.
    ///   - codingPath: the Codable path, if any.
    public init(_ code: Code, _ message: String, at position: Position? = nil, path: String? = nil, codingPath: String? = nil) {
        self.code = code
        self.message = message
        self.position = position
        self.path = path
        self.codingPath = codingPath
    }

    /// The same error, attributed to the file at `path`.
    public func inFile(_ path: String) -> PlistError {
        var copy = self
        copy.path = path
        return copy
    }
}

extension PlistError: CustomStringConvertible {
    /// One line: `FILE:LINE:COL: message`, `FILE: byte N: message`, or `at codingPath: message`.
    public var description: String {
        var parts: [String] = []
        switch position {
        case .line(let l, let c)?:
            parts.append((path.map { "\($0):" } ?? "line ") + "\(l):\(c)")
        case .offset(let o)?:
            if let path { parts.append(path) }
            parts.append("byte \(o)")
        case nil:
            if let path { parts.append(path) }
        }
        if let codingPath, !codingPath.isEmpty { parts.append("at \(codingPath)") }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}
