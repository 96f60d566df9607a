#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
@testable import settings
import Testing

/// The `defaults write` typed arguments (`-int 42`, `-bool YES`, `-dict k v`), which only the
/// `settings` tool reads.
struct DefaultsArgumentTests {
    static let typedArguments: [(String, [String], PlistValue)] = [
        ("-string", ["x y"], PlistValue.string("x y")),
        ("string", [""], .string("")),
        ("-int", ["42"], .integer(42)),
        ("-integer", ["-9223372036854775808"], .integer(PlistInteger(Int64.min))),
        ("-int", ["+5"], .integer(5)),
        ("-float", ["3"], .real(3)),
        ("-float", ["-1.5e-3"], .real(-0.0015)),
        ("-bool", ["YES"], .bool(true)),
        ("-bool", ["false"], .bool(false)),
        ("-boolean", ["1"], .bool(true)),
        ("-bool", ["No"], .bool(false)),
        ("-date", ["2001-01-01T00:00:00Z"], .date(Date(timeIntervalSinceReferenceDate: 0))),
        ("-date", ["2001-01-02 00:00:00 +0100"], .date(Date(timeIntervalSinceReferenceDate: 82_800))),
        ("-date", ["2000-12-31 23:00:00 -0130"], .date(Date(timeIntervalSinceReferenceDate: -3_600 + 5_400))),
        ("-date", ["2024-02-29T12:00:00Z"], .date(Date(timeIntervalSinceReferenceDate: 730_900_800))),
        ("-data", ["0fbd7777"], .data(Data([0x0F, 0xBD, 0x77, 0x77]))),
        ("-data", ["<0f bd>"], .data(Data([0x0F, 0xBD]))),
        ("-data", [""], .data(Data())),
        ("-array", ["a", "1"], .array([.string("a"), .string("1")])),
        ("-array", [], .array([])),
        ("-dict", ["k", "v", "n", "1", "k", "w"], .dictionary(PlistDictionary([("k", .string("w")), ("n", .string("1"))]))),
    ]

    @Test(arguments: typedArguments)
    func readsDefaultsTypedArguments(type: String, values: [String], expected: PlistValue) throws {
        #expect(try PlistValue.fromDefaultsArgument(type: type, values) == expected)
    }

    @Test(arguments: [
        ("-int", ["9223372036854775808"]),
        ("-int", ["1.5"]),
        ("-int", [""]),
        ("-int", ["1", "2"]),
        ("-string", []),
        ("-float", ["nan"]),
        ("-float", ["1e400"]),
        ("-float", ["0x10"]),
        ("-bool", ["maybe"]),
        ("-bool", ["2"]),
        ("-date", ["2023-02-29T00:00:00Z"]),
        ("-date", ["2023-13-01T00:00:00Z"]),
        ("-date", ["2023-01-01T24:00:00Z"]),
        ("-date", ["2023-01-01 00:00:00"]),
        ("-date", ["2023-01-01T00:00:00"]),
        ("-date", ["2023-01-01 00:00:00 +2400"]),
        ("-data", ["0fb"]),
        ("-data", ["zz"]),
        ("-dict", ["k"]),
        ("-number", ["1"]),
    ])
    func rejectsBadDefaultsTypedArguments(type: String, values: [String]) {
        #expect {
            _ = try PlistValue.fromDefaultsArgument(type: type, values)
        } throws: { error in
            (error as? PlistError)?.code == .invalidValue
        }
    }

    @Test func defaultsErrorsNameTheProblem() {
        #expect(throws: PlistError(.invalidValue, "\"maybe\" is not a valid -bool value (expected YES, NO, true, false, 1 or 0)")) {
            try PlistValue.fromDefaultsArgument(type: "-bool", ["maybe"])
        }
        #expect(throws: PlistError(.invalidValue, "-dict needs key value pairs; \"b\" has no value")) {
            try PlistValue.fromDefaultsArgument(type: "-dict", ["a", "1", "b"])
        }
    }
}
