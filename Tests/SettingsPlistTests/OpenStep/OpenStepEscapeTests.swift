import Testing
@testable import SettingsPlist

/// The OpenStep escapes where CoreFoundation's reader would silently make up a character:
/// `\U` with no hex digit, and octal escapes above `\377`.
@Suite struct OpenStepEscapeTests {
    func readError(_ literal: String) throws -> PlistError {
        try #require(throws: PlistError.self) { try PlistValue(literal: literal) }
    }

    @Test(arguments: [
        (#""\U""#, 2), (#""\Uzz""#, 2), (#"("ok", "a\U-")"#, 10), ("{ k = \"x\\U\"; }", 9),
    ])
    func unicodeEscapeWithoutHexDigitsIsAnError(literal: String, column: Int) throws {
        let error = try readError(literal)
        #expect(error.code == .invalidValue)
        #expect(error.position == .line(1, column: column))
        #expect(error.message == #"\U escape without hex digits (expected 1 to 4, as in \U00E9)"#)
    }

    @Test func unicodeEscapesWithOneToFourDigitsStillRead() throws {
        #expect(try PlistValue(literal: #"("\U0", "\U41", "\U0e9", "\U20AC", "\U20ACD")"#) == ["\u{0}", "A", "é", "€", "€D"])
    }

    /// CoreFoundation reads the digits into a byte, so `\400`...`\777` wrap modulo 256 (`\501`
    /// becomes `A`); C refuses them, and so do we, saying what CoreFoundation would have read.
    @Test(arguments: [(#""\400""#, "\\000"), (#""\501""#, "\\101"), (#""x\777""#, "\\377")])
    func octalEscapesAbove377AreErrors(literal: String, wrapped: String) throws {
        let error = try readError(literal)
        #expect(error.code == .invalidValue)
        let escape = literal.dropFirst(literal.hasPrefix(#""x"#) ? 2 : 1).dropLast()
        #expect(error.message == "octal escape \(escape) is above \\377 (CoreFoundation would wrap it to \(wrapped))")
        #expect(error.position == .line(1, column: literal.hasPrefix(#""x"#) ? 3 : 2))
    }

    @Test func octalEscapesUpTo377StillRead() throws {
        #expect(try PlistValue(literal: #""\0\12\101\351\375""#) == "\u{0}\nAØ\u{FF}")
    }
}
