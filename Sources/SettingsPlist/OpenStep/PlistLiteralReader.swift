#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - Public entry points

extension PlistValue {
    /// Reads a property list written in the OpenStep (NeXT) text syntax: the syntax `defaults write`
    /// takes for values and NSUserDefaults takes for `-key value` command-line arguments.
    ///
    /// ```swift
    /// let server = try PlistValue(literal: #"{ host = "example.com"; ports = (80, 443, ); key = <0fbd 7777>; }"#)
    /// server["host"]?.stringValue        // "example.com"
    /// server["ports"]?[0]?.stringValue   // "80": OpenStep has no numbers, only strings
    /// let typed = try PlistValue(literal: "(80, 1.5, YES, \"42\")", inferringTypes: true)
    /// // [.integer(80), .real(1.5), .bool(true), .string("42")]
    /// ```
    ///
    /// The syntax, as CoreFoundation reads it:
    /// - strings: unquoted runs of `A-Z a-z 0-9 _ $ + / : . -`, or quoted with `"` or `'`; inside
    ///   quotes the C escapes `\n \t \r \a \b \f \v`, `\"`, `\\`, octal `\012` (up to three digits,
    ///   read in the NeXTSTEP encoding) and `\U20AC` (one to four hex digits; two in a row that form
    ///   a UTF-16 surrogate pair make one character, a lone surrogate becomes U+FFFD); a backslash
    ///   before any other character stands for that character;
    /// - arrays `( a, b, )`, the trailing comma allowed;
    /// - dictionaries `{ key = value; key2 = value2; }`, keys are strings, every entry ends with
    ///   `;`, a duplicate key keeps its last value, and `key;` alone means `key = key;`;
    /// - data `<0fbd 7777>`: pairs of hex digits, whitespace allowed between pairs;
    /// - comments `// ...` and `/* ... */` wherever whitespace may go.
    ///
    /// As in CoreFoundation, empty (or all-whitespace) text is an empty dictionary, and a string
    /// followed by more text is read as the body of a dictionary without braces (the `.strings`
    /// file form, `a = 1; b = 2;`). Deliberate differences: `+` may appear in unquoted words (so
    /// `+5` needs no quotes); an unterminated `/*` comment, a `\U` with no hex digit (U+0000 in
    /// CoreFoundation), an octal escape above `\377` (CoreFoundation wraps it modulo 256, so `\501`
    /// reads as `A`; C refuses it) or naming no NeXTSTEP character (`\376`, `\377`) are errors, not
    /// silently accepted.
    ///
    /// - Parameters:
    ///   - text: the literal.
    ///   - options: limits for hostile input (``PlistReadOptions/maximumDepth`` bounds nesting).
    ///   - inferringTypes: `false` (OpenStep's rule, the default) keeps every unquoted word a
    ///     string; `true` reads unquoted words that ``inferredScalar(_:)`` recognises as integers,
    ///     reals and Booleans. Quoted text and dictionary keys are strings either way.
    /// - Throws: ``PlistError`` with the line and column (in bytes) of the problem:
    ///   ``PlistError/Code/syntax`` for an unexpected character, ``PlistError/Code/unexpectedEnd``
    ///   for an unterminated string, container, data or comment (positioned at its start),
    ///   ``PlistError/Code/invalidValue`` for bad data or escapes, ``PlistError/Code/tooDeep``.
    public init(literal text: String, options: PlistReadOptions = .init(), inferringTypes: Bool = false) throws(PlistError) {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(PlistError) in
                try PlistLiteralReader.read(buffer, options: options, inferTypes: inferringTypes)
            }
        }
        self = try result.get()
    }

    /// The integer, real or Boolean that a bare word stands for, or `nil` when it is just text.
    ///
    /// ```swift
    /// PlistValue.inferredScalar("42")      // .integer(42)
    /// PlistValue.inferredScalar("-1.5e3")  // .real(-1500)
    /// PlistValue.inferredScalar("yes")     // .bool(true)
    /// PlistValue.inferredScalar("1.2.3")   // nil
    /// ```
    ///
    /// The rules: `[+-]digits` in `Int64.min ... UInt64.max` is an integer (larger stays text);
    /// a decimal with a `.` or an exponent (`1.5`, `.5`, `2e3`) that is finite is a real;
    /// `YES`, `NO`, `true`, `false` in any letter case are Booleans. Nothing else is (no `inf`,
    /// `nan`, hex, `on`/`off`, surrounding spaces).
    ///
    /// - Parameter text: one word, exactly as given.
    public static func inferredScalar(_ text: String) -> PlistValue? {
        var text = text
        return text.withUTF8 { LiteralScalars.infer($0[...]) }
    }
}

// MARK: - For the settings tool

extension PlistValue {
    /// Reads an XML or binary plist from a buffer, for the `settings` tool: the same as
    /// ``init(decoding:options:)`` without its generic and `Result` wrappers, whose metadata the
    /// runtime would instantiate by name (a scan of every protocol conformance in the process) at
    /// the tool's every start.
    package static func decodeBuffer(_ buffer: UnsafeBufferPointer<UInt8>) throws(PlistError) -> PlistValue {
        try decode(buffer, options: PlistReadOptions())
    }

    /// Reads OpenStep text from UTF-8 bytes (CoreFoundation's rules: every scalar a string), for
    /// the `settings` tool, without ``init(literal:options:inferringTypes:)``'s `Result` wrapper.
    package static func literalBuffer(_ buffer: UnsafeBufferPointer<UInt8>) throws(PlistError) -> PlistValue {
        try PlistLiteralReader.read(buffer, options: PlistReadOptions(), inferTypes: false)
    }
}

// MARK: - The reader

/// Reads OpenStep text property lists from UTF-8 bytes. Iterative (no recursion), so nesting is
/// bounded only by ``PlistReadOptions/maximumDepth`` and never by the stack.
enum PlistLiteralReader {
    static func read(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions, inferTypes: Bool) throws(PlistError) -> PlistValue {
        var parser = LiteralParser(buffer, maximumDepth: options.maximumDepth, inferTypes: inferTypes)
        return try parser.parseDocument()
    }
}
