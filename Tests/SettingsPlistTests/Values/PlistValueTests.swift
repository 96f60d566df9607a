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

    @Test func aKeyIsFoundWhetherOrNotItSharesTheStoredString() {
        // Long keys: the stored one and the looked-up one are equal text in separate storage,
        // so the first pass (identical representations) misses and the byte comparison finds it.
        var dict = PlistDictionary()
        let stored = String(repeating: "namespace.", count: 4) + "key"
        dict[stored] = 1
        dict["short"] = 2
        let separate = String(repeating: "namespace.", count: 4) + String("key".reversed().reversed())
        #expect(dict.firstIndex(of: separate) == 0)
        #expect(dict.replaceValue(3, forKey: separate) == 1)
        #expect(dict.firstIndex(of: stored) == 0)
        #expect(dict.replaceValue(4, forKey: "short") == 2)
        #expect(dict.replaceValue(5, forKey: String(stored.dropLast())) == nil)  // a new key
        #expect(dict.keys.count == 3 && dict[stored] == 3 && dict["short"] == 4)
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

    /// Equality reads the arrays' storage in place and skips what two copies share: a copy
    /// changed in one value (sharing its keys), in one key, or in a nested array still differs,
    /// and equal contents in separate storage are equal.
    @Test func equalityIsTheSameWhetherOrNotCopiesShareStorage() {
        var original = PlistDictionary()
        for i in 0..<40 { original["key\(i)"] = i % 2 == 0 ? .string("value \(i)") : .array([.integer(PlistInteger(Int64(i))), .real(.nan)]) }
        let copy = original
        #expect(copy == original)
        var changedValue = original
        changedValue["key7"] = .array([.integer(7), .real(0.0)])
        #expect(changedValue != original)
        changedValue["key7"] = .array([.integer(7), .real(.nan)])
        #expect(changedValue == original, "equal again, though in storage of its own")
        var rebuilt = PlistDictionary()
        for (key, value) in original { rebuilt[String(decoding: Array(key.utf8), as: UTF8.self)] = value }
        #expect(rebuilt == original)
        var renamed = PlistDictionary()
        for (key, value) in original { renamed[key == "key39" ? "key39 " : key] = value }
        #expect(renamed != original)
        let nested: PlistValue = .array([.dictionary(original), .array([.real(.nan)])])
        #expect(nested == nested)
        var shorter = original
        _ = shorter.removeValue(forKey: "key0")
        #expect(nested != .array([.dictionary(shorter), .array([.real(.nan)])]))
        #expect(nested != .array([.dictionary(original), .array([.real(0.0)])]))
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
