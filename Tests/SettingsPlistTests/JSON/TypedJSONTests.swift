#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import SettingsPlist

struct TypedJSONTests {
    @Test func printsCanonicalForm() {
        let value: PlistValue = .dictionary([
            "i": .integer(PlistInteger(UInt64.max)),
            "r": .real(-0.0), "n": .real(.nan), "inf": .real(-.infinity),
            "s": "a\"b\\c\n\u{1}é",
            "d": .date(Date(timeIntervalSinceReferenceDate: 0.5)),
            "b": .data(Data([0, 1, 2])),
            "u": .uid(7), "t": true, "a": [],
        ])
        #expect(value.typedJSON() == #"{"dict": [["i", {"int": 18446744073709551615}], ["r", {"real": -0.0}], ["n", {"real": "nan"}], ["inf", {"real": "-inf"}], ["s", {"string": "a\"b\\c\n\u0001é"}], ["d", {"date": "2001-01-01T00:00:00.5Z"}], ["b", {"data": "AAEC"}], ["u", {"uid": 7}], ["t", {"bool": true}], ["a", {"array": []}]]}"#)
    }

    @Test func readsWhatItPrints() throws {
        let value: PlistValue = ["x": [1, 2.5, "\u{1F600}"], "big": .integer(PlistInteger(Int64.min)), "when": .date(Date(timeIntervalSinceReferenceDate: -1234.5))]
        #expect(try PlistValue(typedJSON: Array(value.typedJSON().utf8)) == value)
    }

    @Test func readsEscapesAndSurrogatePairs() throws {
        let value = try PlistValue(typedJSON: Array(#"{"string": "\ud83d\ude00\u00e9\/"}"#.utf8))
        #expect(value == "\u{1F600}é/")
    }

    @Test(arguments: [
        (#"{"int": 18446744073709551616}"#, "line 1:1: integer 18446744073709551616 is outside Int64.min ... UInt64.max"),
        (#"{"int": 1"#, "line 1:10: unexpected end of JSON"),
        ("{\"string\": \"\\ud800\"}", "line 1:20: lone surrogate in JSON string"),
        (#"{"strin": "x"}"#, #"line 1:1: unknown typed value "strin" or wrong payload"#),
        (#"{"int": 1} x"#, "line 1:12: unexpected text after the JSON value"),
    ])
    func reportsMalformedInput(text: String, message: String) {
        #expect(throws: PlistError.self) { try PlistValue(typedJSON: Array(text.utf8)) }
        do {
            _ = try PlistValue(typedJSON: Array(text.utf8))
        } catch {
            #expect(error.description == message)
        }
    }
}
