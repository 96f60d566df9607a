import Testing
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import SettingsPlist

struct PlistLiteralTests {
    // MARK: Values

    @Test func readsAWholeOpenStepDocument() throws {
        let text = """
            // server settings
            {
                host = "example.com";          /* quoted */
                path = /usr/local/bin;         // unquoted, with slashes
                ports = (80, 443, );
                key = <0fbd 7777 AB>;
                'single' = 'quotes';
                nested = { empty = (); none = {}; };
            }
            """
        let value = try PlistValue(literal: text)
        let expected: PlistValue = [
            "host": "example.com",
            "path": "/usr/local/bin",
            "ports": ["80", "443"],
            "key": .data(Data([0x0F, 0xBD, 0x77, 0x77, 0xAB])),
            "single": "quotes",
            "nested": ["empty": [], "none": .dictionary([:])],
        ]
        #expect(value == expected)
        #expect(value.dictionaryValue?.keys == ["host", "path", "ports", "key", "single", "nested"])
    }

    @Test(arguments: [
        ("abc", "abc"),
        ("a//b", "a//b"),                       // `//` inside a word is not a comment
        ("$x+y:z.w-_", "$x+y:z.w-_"),
        (#""""#, ""),
        (#""a b""#, "a b"),
        (#""\n\t\r\a\b\f\v""#, "\n\t\r\u{07}\u{08}\u{0C}\u{0B}"),
        (#""\"\\\'\q""#, "\"\\'q"),          // other characters stand for themselves
        (#""\\n""#, "\\n"),
        (#""caf\é""#, "café"),
        (#""\101\0125""#, "A\n5"),           // octal: at most three digits
        (#""\0""#, "\u{0}"),
        (#""\351\373""#, "Øß"),              // NeXTSTEP, not Latin-1
        (#""\U20AC\u00e9""#, "€u00e9"),
        (#""\U41x""#, "Ax"),                  // fewer than four hex digits
        (#""\U0zz""#, "\u{0}zz"),            // none at all is an error (OpenStepEscapeTests)
        (#""\UD83D\UDE00""#, "😀"),            // a surrogate pair makes one character
        (#""\UD83Dx""#, "\u{FFFD}x"),         // a lone surrogate cannot be kept
        (#""\UD83D\U0041""#, "\u{FFFD}A"),
        (#""\UDE00""#, "\u{FFFD}"),
        ("\"line\\\nnext\"", "line\nnext"),
        ("\"ü 日本\"", "ü 日本"),
    ])
    func readsStrings(literal: String, expected: String) throws {
        let value = try PlistValue(literal: literal)
        #expect(value == .string(expected))
    }

    @Test func emptyAndBlankTextAreAnEmptyDictionary() throws {
        #expect(try PlistValue(literal: "") == .dictionary([:]))
        #expect(try PlistValue(literal: " \n\t// only a comment\n/* and another */ \u{2028}") == .dictionary([:]))
    }

    @Test func aStringFollowedByMoreTextIsAStringsFile() throws {
        let value = try PlistValue(literal: "a = 1; \"b c\" = (x); d;")
        #expect(value == ["a": "1", "b c": ["x"], "d": "d"])
    }

    @Test func dictionaryShortcutsAndDuplicates() throws {
        let value = try PlistValue(literal: "{ a = 1; b; a = 2; }")
        #expect(value == ["a": "2", "b": "b"])
        #expect(value.dictionaryValue?.keys == ["a", "b"])
    }

    @Test func unquotedWordsStayStringsUnlessTypesAreInferred() throws {
        let text = #"{ n = 42; x = -1.5e3; on = YES; off = false; q = "7"; "12" = 12; big = 99999999999999999999; v = 1.2.3; }"#
        let plain = try PlistValue(literal: text)
        #expect(plain["n"] == "42")
        #expect(plain["on"] == "YES")
        let typed = try PlistValue(literal: text, inferringTypes: true)
        #expect(typed == [
            "n": 42, "x": .real(-1500), "on": true, "off": false, "q": "7", "12": 12,
            "big": "99999999999999999999", "v": "1.2.3",
        ])
        #expect(try PlistValue(literal: "(1, (2, <00>))", inferringTypes: true) == [1, [2, .data(Data([0]))]])
    }

    @Test(arguments: [
        ("0", PlistValue.integer(0)),
        ("+7", .integer(7)),
        ("-9223372036854775808", .integer(PlistInteger(Int64.min))),
        ("18446744073709551615", .integer(PlistInteger(UInt64.max))),
        ("1.", .real(1)),
        (".5", .real(0.5)),
        ("-0.0", .real(-0.0)),
        ("2E+3", .real(2000)),
        ("yes", .bool(true)),
        ("True", .bool(true)),
        ("NO", .bool(false)),
        ("fAlSe", .bool(false)),
    ])
    func infersScalars(text: String, expected: PlistValue) {
        #expect(PlistValue.inferredScalar(text) == expected)
    }

    @Test(arguments: [
        "", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "0x10", "inf", "nan", "1e999", " 1", "1 ",
        "-9223372036854775809", "18446744073709551616", "yess", "on", "y", "12abc", "١٢",
    ])
    func leavesOtherWordsAsText(text: String) {
        #expect(PlistValue.inferredScalar(text) == nil)
    }

    // MARK: Errors

    @Test(arguments: [
        ("(a, b", PlistError.Code.unexpectedEnd, 1, 1),
        ("{ a = b }", .syntax, 1, 9),
        ("(a b)", .syntax, 1, 4),
        (#""abc"#, .unexpectedEnd, 1, 1),
        ("{\n  key = \"value\";\n  list = (1, 2;\n}", .syntax, 3, 15),
        ("<0fb>", .invalidValue, 1, 5),
        ("<zz>", .invalidValue, 1, 2),
        ("<0f", .unexpectedEnd, 1, 1),
        ("{ a = 1; } junk", .syntax, 1, 12),
        ("(a) /* open", .unexpectedEnd, 1, 5),
        ("/* open", .unexpectedEnd, 1, 1),
        ("{ = b; }", .syntax, 1, 3),
        ("{ a b }", .syntax, 1, 5),
        ("(a, , b)", .syntax, 1, 5),
        ("'it''s'", .syntax, 1, 5),
        ("(\r\na,\r\n#)", .syntax, 3, 1),
        ("(é)", .syntax, 1, 2),
        (#"  "\777""#, .invalidValue, 1, 4),
        (#""\376""#, .invalidValue, 1, 2),
        ("{ a = (1, 2); b = ", .unexpectedEnd, 1, 1),
        ("a = 1; b", .unexpectedEnd, 1, 8),
        ("a = 1; b = 2", .unexpectedEnd, 1, 13),
        ("a = 1; }", .syntax, 1, 8),
        ("hello world", .syntax, 1, 7),
        ("\"x\\", .unexpectedEnd, 1, 1),
        (")", .syntax, 1, 1),
        ("\u{0}", .syntax, 1, 1),
    ])
    func reportsMalformedInputWithItsPosition(text: String, code: PlistError.Code, line: Int, column: Int) {
        #expect {
            _ = try PlistValue(literal: text)
        } throws: { error in
            guard let error = error as? PlistError else { return false }
            return error.code == code && error.position == .line(line, column: column)
        }
    }

    @Test func errorsDescribeTheProblemOnOneLine() {
        #expect(throws: PlistError(.syntax, "expected ',' or ')' after an array element, found 'b'", at: .line(1, column: 4))) {
            try PlistValue(literal: "(a b)")
        }
        #expect(throws: PlistError(.syntax, "unexpected character U+00E9 in an array (expected a value or ')')", at: .line(1, column: 2))) {
            try PlistValue(literal: "(é)")
        }
        #expect(throws: PlistError(.unexpectedEnd, "unterminated array: no ')' for this '('", at: .line(2, column: 7))) {
            try PlistValue(literal: "{ a = 1;\n  b = (x, y")
        }
    }

    // MARK: Limits

    @Test func nestingIsBoundedByTheOptions() throws {
        let options = PlistReadOptions(maximumDepth: 3)
        #expect(try PlistValue(literal: "((()))", options: options) == [[[]]])
        #expect(try PlistValue(literal: "{a={b=(c);};}", options: options) == ["a": ["b": ["c"]]])
        #expect(throws: PlistError(.tooDeep, "arrays and dictionaries nested deeper than 3", at: .line(1, column: 4))) {
            try PlistValue(literal: "((({})))", options: options)
        }
        // The strings-file form is a dictionary too.
        #expect(throws: PlistError.self) { try PlistValue(literal: "a = ((()));", options: options) }
    }

    @Test func defaultDepthIsCoreFoundations() throws {
        let ok = String(repeating: "(", count: 512) + String(repeating: ")", count: 512)
        #expect(try PlistValue(literal: ok).arrayValue?.count == 1)
        let tooDeep = String(repeating: "(", count: 513) + String(repeating: ")", count: 513)
        #expect(throws: PlistError(.tooDeep, "arrays and dictionaries nested deeper than 512", at: .line(1, column: 513))) {
            try PlistValue(literal: tooDeep)
        }
        // Far deeper input is refused at the limit, quickly.
        let hostile = String(repeating: "(", count: 1_000_000)
        #expect(throws: PlistError.self) { try PlistValue(literal: hostile) }
        // A raised limit works (the parser keeps its own stack, not the call stack).
        let depth = 3_000
        let huge = String(repeating: "(", count: depth) + "x" + String(repeating: ")", count: depth)
        var value = try PlistValue(literal: huge, options: PlistReadOptions(maximumDepth: depth))
        var levels = 0
        while case .array(let items) = value, let first = items.first {
            value = first
            levels += 1
        }
        #expect(levels == depth)
        #expect(value == "x")
    }

    @Test func longInputsStayLinear() throws {
        let count = 100_000
        let array = "(" + Array(repeating: "\"a\\tb\"", count: count).joined(separator: ",") + ")"
        #expect(try PlistValue(literal: array).arrayValue?.count == count)
        let dict = "{" + (0..<count).map { "k\($0) = v;" }.joined() + "}"
        #expect(try PlistValue(literal: dict).dictionaryValue?.count == count)
        let data = "<" + String(repeating: "0f ", count: count) + ">"
        #expect(try PlistValue(literal: data).dataValue?.count == count)
    }

    @Test func hostileInputNeverCrashes() {
        // Deterministic pseudo-random text over the syntax's own characters.
        let alphabet = Array("(){}<>=;,\"'\\/*aZ09 \n\r\tUé+-.$:_\u{2028}")
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var parsed = 0, failed = 0
        for _ in 0..<3_000 {
            var text = ""
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 58)
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text.append(alphabet[Int(state >> 33) % alphabet.count])
            }
            do {
                _ = try PlistValue(literal: text, options: PlistReadOptions(maximumDepth: 4), inferringTypes: state & 1 == 0)
                parsed += 1
            } catch {
                guard case .line(let line, let column)? = error.position else {
                    Issue.record("error without a position for \(text.debugDescription): \(error)")
                    continue
                }
                #expect(line >= 1 && column >= 1 && column <= text.utf8.count + 1, "\(text.debugDescription)")
                failed += 1
            }
        }
        #expect(parsed > 0 && failed > 0)
    }
}
