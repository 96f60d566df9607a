import Foundation
import SettingsPlist
import Testing

struct TextFormsTests {
    @Test func literalTextIsWhatDefaultsPrintsAndReadsBack() throws {
        let value: PlistValue = ["name": "Ada L", "Network": ["timeout": 30], "on": true, "tags": ["a", "b c"], "blob": .data(Data([0x0f, 0xbd, 0x77, 0x77, 0x01]))]
        #expect(value.literalText == """
            {
                name = "Ada L";
                Network = {
                    timeout = 30;
                };
                on = 1;
                tags = (
                    a,
                    "b c"
                );
                blob = <0fbd7777 01>;
            }
            """)
        let back = try PlistValue(literal: value.literalText, inferringTypes: true)
        #expect(back["name"] == "Ada L" && back["tags"] == ["a", "b c"] && back["Network"]?["timeout"] == 30)
        #expect(PlistValue.string("a \"q\"\n").literalText == #""a \"q\"\n""#)
        #expect(PlistValue.string("Ada L").displayText == "Ada L")
        #expect(PlistValue.date(Date(timeIntervalSinceReferenceDate: 0)).displayText == "\"2001-01-01 00:00:00 +0000\"")
    }

    @Test func jsonTextWritesPlainJSONAndRefusesWhatJSONCannotHold() throws {
        let value: PlistValue = ["a": 1, "b": [true, 1.5, "x\"y"], "c": [:]]
        #expect(try value.jsonText() == "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    1.5,\n    \"x\\\"y\"\n  ],\n  \"c\": {}\n}")
        let dated: PlistValue = ["servers": [["started": .date(Date())]]]
        #expect(throws: PlistError.self) { try dated.jsonText() }
        do {
            _ = try dated.jsonText()
        } catch {
            #expect(error.code == .unencodable)
            #expect(error.codingPath == "servers[0]/started")
        }
    }
}
