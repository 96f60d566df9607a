import Testing
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import SettingsPlist

/// `encoded(as:)` hands the XML writer's buffer to `Data` instead of copying it: the bytes must be
/// exactly those of `encodedBytes(as:)`, whether the document fit the writer's size estimate or
/// outgrew it into a buffer of its own.
struct EncodedDataTests {
    @Test("encoded(as: .xml) holds the same bytes as encodedBytes(as: .xml)", arguments: [
        PlistValue.dictionary([:]),
        ["name": "Ada", "n": 42, "x": 0.5, "on": true, "list": [1, "two"], "blob": .data(Data(repeating: 7, count: 300))],
        .string(String(repeating: "&<>\r", count: 20_000)),  // escapes that may outgrow the estimate
        .array((0 ..< 5_000).map { .string("élément \($0) & \u{1F600}") }),
    ])
    func sameBytes(_ value: PlistValue) throws {
        let data = try value.encoded(as: .xml)
        let bytes = try value.encodedBytes(as: .xml)
        #expect(Array(data) == bytes)
        #expect(try PlistValue(decoding: data) == value)
    }

    @Test("the Data outlives the value and copies independently")
    func dataIsIndependent() throws {
        var data: Data
        do {
            let value: PlistValue = ["k": .string(String(repeating: "v", count: 10_000))]
            data = try value.encoded(as: .xml)
        }
        let copy = data
        data.append(0x0A)
        #expect(copy.count + 1 == data.count)
        #expect(try PlistValue(decoding: copy)["k"]?.stringValue?.count == 10_000)
    }
}
