import Testing
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import SettingsPlist

struct PlistValueTests {
    @Test func literalsBuildTheExpectedCases() {
        let value: PlistValue = ["name": "Ada", "n": 42, "x": 0.5, "on": true, "list": [1, "two"]]
        #expect(value["name"]?.stringValue == "Ada")
        #expect(value["n"]?.intValue == 42)
        #expect(value["x"]?.doubleValue == 0.5)
        #expect(value["on"]?.boolValue == true)
        #expect(value["list"]?[1]?.stringValue == "two")
        #expect(value["list"]?[2] == nil)
        #expect(value["missing"] == nil)
        #expect(value.dictionaryValue?.keys == ["name", "n", "x", "on", "list"])
    }

    @Test func integersCoverTheWholePlistRange() {
        let top = PlistInteger(UInt64.max)
        #expect(top.int64Value == nil)
        #expect(top.uint64Value == UInt64.max)
        #expect(top.description == "18446744073709551615")
        let bottom = PlistInteger(Int64.min)
        #expect(bottom.uint64Value == nil)
        #expect(bottom.int64Value == Int64.min)
        #expect(bottom < top)
        #expect(PlistInteger(-1) < PlistInteger(0))
        #expect(PlistInteger(300).value(as: UInt8.self) == nil)
        #expect(PlistInteger(300).value(as: Int16.self) == 300)
        #expect(PlistInteger(exactly: UInt64(5)) == PlistInteger(Int64(5)))
    }

    @Test func realsCompareBitForBitAndNaNEqualsNaN() {
        #expect(PlistValue.real(-0.0) != PlistValue.real(0.0))
        #expect(PlistValue.real(.nan) == PlistValue.real(-.nan))
        #expect(Set([PlistValue.real(.nan), .real(.nan)]).count == 1)
        #expect(PlistValue.integer(1) != PlistValue.real(1))
        // Found by fuzzing: a binary date may hold any double, NaN included.
        let nanDate = PlistValue.date(Date(timeIntervalSinceReferenceDate: .nan))
        #expect(nanDate == nanDate)
        #expect(Set([nanDate, nanDate]).count == 1)
        #expect(PlistValue.date(Date(timeIntervalSinceReferenceDate: -0.0)) != .date(Date(timeIntervalSinceReferenceDate: 0.0)))
        #expect(PlistValue.integer(1) != PlistValue.bool(true))
    }

    @Test func stringsAndKeysCompareByCodePoints() {
        let composed = "\u{E9}", decomposed = "e\u{301}"
        #expect(composed == decomposed)  // Swift's own equality
        #expect(PlistValue.string(composed) != PlistValue.string(decomposed))
        var dict = PlistDictionary()
        dict[composed] = 1
        dict[decomposed] = 2
        #expect(dict.count == 2)
        #expect(dict[composed] == 1)
        #expect(dict[decomposed] == 2)
    }

    @Test(arguments: [3, 40])
    func dictionaryKeepsOrderReplacesInPlaceAndRemoves(size: Int) {
        var dict = PlistDictionary()
        for i in 0..<size { dict["k\(i)"] = .integer(PlistInteger(Int64(i))) }
        dict["k1"] = "replaced"
        #expect(dict.keys[1] == "k1")
        #expect(dict["k1"] == "replaced")
        dict["k0"] = nil
        #expect(dict.count == size - 1)
        #expect(dict.keys.first == "k1")
        #expect(dict["k\(size - 1)"]?.intValue == size - 1)
        #expect(dict.removeValue(forKey: "k2")?.intValue == 2)
        #expect(dict["k2"] == nil)
    }

    @Test func readerDuplicateRulesKeepTheFirstPosition() {
        var xmlStyle = PlistDictionary()
        _ = xmlStyle.insertFromReader("a", 1, keepFirst: false)
        _ = xmlStyle.insertFromReader("b", 2, keepFirst: false)
        #expect(xmlStyle.insertFromReader("a", 3, keepFirst: false) == false)
        #expect(xmlStyle.keys == ["a", "b"])
        #expect(xmlStyle["a"] == 3)
        let binaryStyle = PlistDictionary([("a", 1), ("b", 2), ("a", 3)], keepingFirstDuplicate: true)
        #expect(binaryStyle.keys == ["a", "b"])
        #expect(binaryStyle["a"] == 1)
    }

    @Test func dictionaryEqualityDependsOnOrder() {
        let ab: PlistDictionary = ["a": 1, "b": 2]
        let ba: PlistDictionary = ["b": 2, "a": 1]
        #expect(ab != ba)
        #expect(ab.sortedByKey() == ba.sortedByKey())
    }

    @Test func errorDescriptionsNameFilePositionAndPath() {
        let xml = PlistError(.unknownElement, "unknown element <integr>", at: .line(12, column: 9))
        #expect(xml.description == "line 12:9: unknown element <integr>")
        #expect(xml.inFile("settings.plist").description == "settings.plist:12:9: unknown element <integr>")
        let binary = PlistError(.corruptBinary, "object offset out of range", at: .offset(40), path: "a.bplist")
        #expect(binary.description == "a.bplist: byte 40: object offset out of range")
        let coding = PlistError(.typeMismatch, "expected integer, found string", codingPath: "servers[2].port")
        #expect(coding.description == "at servers[2].port: expected integer, found string")
    }
}

struct PlistDateTests {
    @Test(arguments: [
        (0.0, "2001-01-01T00:00:00Z"),
        (-1.0, "2000-12-31T23:59:59Z"),
        (0.25, "2001-01-01T00:00:00.25Z"),
        (-0.5, "2000-12-31T23:59:59.5Z"),
        (-978_307_200.0, "1970-01-01T00:00:00Z"),
        (-63_113_904_000.0, "0001-01-01T00:00:00Z"),
        (1e-6, "2001-01-01T00:00:00.000001Z"),
    ])
    func formatsShortestExactText(seconds: Double, text: String) {
        #expect(PlistDate.iso8601(seconds, fraction: true) == text)
        #expect(PlistDate.parse(text.utf8, allowFraction: true) == seconds)
    }

    @Test func wholeSecondFormFloors() {
        #expect(PlistDate.iso8601(0.75, fraction: false) == "2001-01-01T00:00:00Z")
        #expect(PlistDate.iso8601(-0.25, fraction: false) == "2000-12-31T23:59:59Z")
    }

    @Test func fractionsRoundTripForAwkwardDoubles() {
        for t in [1.1, 123_456_789.123_456_7, -987_654.321, 0.1 + 0.2, 7e-10, 6e8 + 1.0 / 3.0] {
            let text = PlistDate.iso8601(t, fraction: true)
            #expect(PlistDate.parse(text.utf8, allowFraction: true) == t, "\(t) -> \(text)")
        }
    }

    @Test func strictXMLFormRejectsFractionsAndJunk() {
        #expect(PlistDate.parse("2001-01-01T00:00:00.5Z".utf8, allowFraction: false) == nil)
        #expect(PlistDate.parse("2001-01-01T00:00:00".utf8, allowFraction: false) == nil)
        #expect(PlistDate.parse("2001-01-01 00:00:00Z".utf8, allowFraction: false) == nil)
        #expect(PlistDate.parse("99999999999-01-01T00:00:00Z".utf8, allowFraction: false) == nil)
        #expect(PlistDate.parse("2001-13-01T00:00:00Z".utf8, allowFraction: false) == PlistDate.parse("2002-01-01T00:00:00Z".utf8, allowFraction: false))
    }
}

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
