import Foundation
import Settings
import Testing
import SettingsTestSupport

/// Models of every Codable shape: round trips, unknown keys kept, bad parts falling back alone.
@Suite("Models: Codable shapes")
struct ModelCodingTests {
    @Test func enumsWithAssociatedValuesAndKeyedDictionariesRoundTrip() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("s.plist")
        var model = AttackShapes()
        model.shape = .rect(w: 3, h: 4)
        model.byKind = [.alpha: 1, .beta: 2]
        model.byNumber = [1: "one", -2: "minus two"]
        try model.save(to: url)
        #expect(try AttackShapes.load(from: url) == model)
        model.shape = .empty
        try model.save(to: url)
        #expect(try AttackShapes.load(from: url) == model)
    }

    @Test func unknownKeysInsideAnEnumPayloadAreKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("s.plist")
        try PlistValue.dictionary(["shape": ["rect": ["w": 1, "h": 2, "depth": 3]]]).write(to: url)
        var model = try AttackShapes.load(from: url)
        #expect(model.shape == .rect(w: 1, h: 2))
        model.name = "renamed"
        try model.save(to: url)
        #expect(try stored(url)["shape"] == ["rect": ["w": 1, "h": 2, "depth": 3]])
    }

    @Test func anUnknownEnumCaseReplacedByTheProgramIsNotMergedIntoTheNewCase() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("s.plist")
        // A newer program added `triangle`: this one cannot decode it and falls back.
        try PlistValue.dictionary(["name": "n", "shape": ["triangle": ["side": 2]]]).write(to: url)
        var model = try AttackShapes.load(from: url)
        #expect(model.shape == .circle(radius: 1))
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field 'shape'").isEmpty)
        try model.save(to: url)                               // unchanged: the triangle stays
        #expect(try stored(url)["shape"] == ["triangle": ["side": 2]])
        model.shape = .rect(w: 5, h: 6)                       // the program's own choice
        try model.save(to: url)
        #expect(try stored(url)["shape"] == ["rect": ["w": 5, "h": 6]])
        #expect(try AttackShapes.load(from: url).shape == .rect(w: 5, h: 6))
    }

    @Test func anUndecodableStructReplacedByTheProgramGetsNoStaleKeys() throws {
        let store = SettingsStore.inMemory(["shapes": ["shape": ["triangle": ["side": 2]]]])
        let model = StoredModel<AttackShapes>("shapes", store: store)
        var shapes = model.wrappedValue
        #expect(shapes.shape == .circle(radius: 1))
        shapes.shape = .empty
        model.wrappedValue = shapes
        #expect(model.wrappedValue.shape == .empty)
        #expect(store["shapes/shape/triangle"] == nil)
    }

    @Test func fieldsAddedInsideNestedValuesTakeTheirDefaultsUnreported() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("added.plist")
        // Written before `Window.title` and `Shape.rect`'s `h` existed... and a removed entry.
        try PlistValue.dictionary(["name": "old", "window": ["zoom": 2.0], "shape": ["empty": [:]]]).write(to: url)
        let fleet = try Fleet.load(from: url)
        #expect(fleet.window == Fleet.Window(zoom: 2.0, title: "Main"))
        #expect(fleet.name == "old")
        #expect(DiagnosticsRecorder.diagnostics(containing: url.path).isEmpty)
        let shapes = try AttackShapes.load(from: url)
        #expect(shapes.shape == .empty)
        #expect(shapes.name == "old")
    }

    @Test func entriesRemovedFromADictionaryWithDefaultEntriesStayRemoved() throws {
        struct Shortcuts: SettingsModel, Codable, Equatable {
            var keys: [String: String] = ["copy": "c", "cut": "x"]
            var nested = Nested()
            struct Nested: Codable, Equatable { var keys: [String: Int] = ["a": 1, "b": 2] }
        }
        let dir = try TemporaryDirectory()
        let url = dir.file("keys.plist")
        var model = Shortcuts()
        model.keys["copy"] = nil
        model.nested.keys = [:]
        try model.save(to: url)
        #expect(try Shortcuts.load(from: url) == model)
    }

    @Test func dictionariesKeyedByNumbersAndEnumsFallBackAloneOnBadKeys() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("k.plist")
        try PlistValue.dictionary([
            "name": "kept",
            "byNumber": ["1": "one", "x": "not a number"],
            "byKind": ["alpha": 1, "gamma": 3],
        ]).write(to: url)
        let model = try AttackShapes.load(from: url)
        #expect(model.name == "kept")
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field 'byNumber").isEmpty)
        try model.save(to: url)
        #expect(try stored(url)["byNumber"] == ["1": "one", "x": "not a number"])
        #expect(try stored(url)["byKind"] == ["alpha": 1, "gamma": 3])
    }

    @Test func optionalArraysSetsDatesDataAndURLsRoundTripAndFallBackAlone() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("x.plist")
        var model = AttackScalars()
        model.tags = ["a", "b"]
        model.unique = ["x", "y", "z"]
        model.when = Date(timeIntervalSince1970: 1_700_000_000)  // XML dates carry whole seconds
        model.blob = Data([0, 1, 2, 255])
        model.link = try #require(URL(string: "https://example.com/a?b=c"))
        model.count = 3
        try model.save(to: url)
        #expect(try AttackScalars.load(from: url) == model)
        // Each field of the wrong type falls back alone, and its stored value stays.
        let hostile: PlistDictionary = [
            "tags": "not an array", "unique": ["x", 1], "when": "yesterday", "blob": 7, "link": 3.5, "count": 9,
        ]
        try PlistValue.dictionary(hostile).write(to: url)
        let loaded = try AttackScalars.load(from: url)
        #expect(loaded.count == 9)
        #expect(loaded.tags == nil)
        for field in ["tags", "when", "blob", "link"] {
            #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field '\(field)").isEmpty, "no report for \(field)")
        }
        try loaded.save(to: url)
        #expect(Dictionary(uniqueKeysWithValues: try stored(url).map { ($0.key, $0.value) })
            == Dictionary(uniqueKeysWithValues: hostile.map { ($0.key, $0.value) }))
    }

    @Test func anArrayOfOptionalsWithNilIsRefusedClearlyAndTheFileStaysIntact() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("o.plist")
        try PlistValue.dictionary(["slots": ["a", "b"]]).write(to: url)
        let before = try Data(contentsOf: url)
        var model = try AttackOptionalElements.load(from: url)
        #expect(model.slots == ["a", "b"])
        model.slots = ["a", nil]
        do {
            try model.save(to: url)
            // Written: then it must read back the same.
            #expect(try AttackOptionalElements.load(from: url) == model)
        } catch {
            #expect(error.description.contains("slots") || error.description.contains("nil"), "unclear: \(error)")
            #expect(try Data(contentsOf: url) == before)
        }
    }

    @Test func unknownKeysInSetElementsStayWithTheirOwnElements() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("set.plist")
        // Each element's unknown `tag` names its own host.
        let hosts = (0..<12).map { "host\($0)" }
        let members = hosts.enumerated().map { i, host -> PlistValue in
            ["host": .string(host), "port": .integer(PlistInteger(Int64(i))), "tag": .string(host)]
        }
        try PlistValue.dictionary(["name": "n", "members": .array(members)]).write(to: url)
        var model = try AttackSetFleet.load(from: url)
        #expect(model.members.count == 12)
        model.name = "changed"
        try model.save(to: url)
        let saved = try #require(try stored(url)["members"]?.arrayValue)
        for element in saved {
            let dictionary = try #require(element.dictionaryValue)
            // Losing the tag is data loss; a tag moved to another element is corruption.
            #expect(dictionary["tag"] == dictionary["host"], "element \(element)")
        }
    }

    @Test func aNestedValueWhoseDecodingCodeThrowsFallsBackAlone() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("c.plist")
        try PlistValue.dictionary(["range": ["low": 9, "high": 1, "why": "x"], "wrapped": ["inner": 5], "label": "L"]).write(to: url)
        var model = try AttackCustom.load(from: url)
        #expect(model.label == "L")
        #expect(model.wrapped.inner == 5)
        #expect(model.range == AttackCustom.Range())
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field 'range").isEmpty)
        model.label = "M"
        try model.save(to: url)
        #expect(try stored(url) == ["range": ["low": 9, "high": 1, "why": "x"], "wrapped": ["inner": 5], "label": "M"])
    }

    @Test func superDecoderFieldsDecodeInRecoveryMode() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("c.plist")
        // `label` fails, forcing the recovering pass, which must still handle superDecoder.
        try PlistValue.dictionary(["wrapped": ["inner": 5], "label": 12]).write(to: url)
        let model = try AttackCustom.load(from: url)
        #expect(model.wrapped.inner == 5)
        #expect(model.label == "custom")
        try PlistValue.dictionary(["wrapped": ["inner": "five"], "label": "ok"]).write(to: url)
        let second = try AttackCustom.load(from: url)
        #expect(second.label == "ok")
        #expect(second.wrapped.inner == 0)
    }

    @Test func keysThatAreNumbersAreOrdinaryKeys() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("n.plist")
        try PlistValue.dictionary(["name": "Ada", "0": 1, "-1": "x", "1e3": true]).write(to: url)
        var model = try AttackPlain.load(from: url)
        #expect(model.name == "Ada")
        model.volume = 1
        try model.save(to: url)
        #expect(try stored(url) == ["name": "Ada", "volume": 1.0, "0": 1, "-1": "x", "1e3": true])
    }

    @Test func duplicateKeysInXMLAreRefusedOrResolvedWithoutLoss() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("dup.plist")
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>name</key><string>first</string>
        <key>volume</key><real>0.25</real>
        <key>name</key><string>second</string>
        </dict></plist>
        """
        try Data(xml.utf8).write(to: url)
        let model: AttackPlain
        do {
            model = try AttackPlain.load(from: url)
        } catch {
            #expect(error.description.contains(url.path), "unclear: \(error)")
            return
        }
        #expect(["first", "second"].contains(model.name))
        #expect(model.volume == 0.25)
        try model.save(to: url)
        // Whatever was chosen, the file now holds one `name` that reads back the same.
        let text = try String(decoding: Data(contentsOf: url), as: UTF8.self)
        #expect(text.components(separatedBy: "<key>name</key>").count == 2)
        #expect(try AttackPlain.load(from: url) == model)
    }

    @Test func keysEqualOnlyUnderUnicodeEquivalenceAreBothKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("u.plist")
        // Swift's `String ==` calls these equal, so a `[String: Server]` holds only one of them.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try PlistValue.dictionary(["name": "n", "byName": [
            composed: ["host": "a", "port": 1], decomposed: ["host": "b", "port": 2],
        ]]).write(to: url)
        var fleet = try Fleet.load(from: url)
        #expect(fleet.byName.count == 1)
        fleet.name = "m"
        try fleet.save(to: url)
        let byName = try #require(try stored(url)["byName"]?.dictionaryValue)
        #expect(Set(byName.keys.map { $0.unicodeScalars.map(\.value) }) == [
            composed.unicodeScalars.map(\.value), decomposed.unicodeScalars.map(\.value),
        ])
    }

    @Test func unknownValuesOfEveryTypeSurviveInBothFormats() throws {
        let dir = try TemporaryDirectory()
        let extra: PlistValue = [
            "date": .date(Date(timeIntervalSince1970: 1_000_000_000)), "data": .data(Data([1, 2, 3])),
            "big": .integer(PlistInteger(UInt64.max)), "small": .integer(PlistInteger(Int64.min)),
            "real": 0.1, "bool": false, "empty": [], "emptyDict": [:], "nested": [["a": [1, [2]]]],
        ]
        for format in [PlistFormat.xml, .binary] {
            let url = dir.file("every-\(format).plist")
            try PlistValue.dictionary(["name": "n", "extra": extra]).write(to: url, format: format)
            var model = try AttackPlain.load(from: url)
            model.volume = 0.9
            try model.save(to: url)
            #expect(try stored(url)["extra"] == extra, "\(format)")
        }
    }

    @Test(.disabled("nil is written by leaving the key out, so an optional whose default is not nil comes back as the default"))
    func anOptionalSetToNilStaysNil() throws {
        struct Greeting: SettingsModel, Codable, Equatable {
            var nickname: String? = "friend"
        }
        let dir = try TemporaryDirectory()
        let url = dir.file("g.plist")
        var model = Greeting()
        model.nickname = nil
        try model.save(to: url)
        #expect(try Greeting.load(from: url).nickname == nil)
    }

    @Test func twoArchivedFieldsUnderOneKeyAreRefusedNotMerged() throws {
        struct Clash: SettingsModel {
            @Archived("x") var count = 1
            @Archived("x") var label = "one"
        }
        let dir = try TemporaryDirectory()
        let url = dir.file("clash.plist")
        try PlistValue.dictionary(["x": 5, "other": true]).write(to: url)
        let before = try Data(contentsOf: url)
        #expect {
            try Clash().save(to: url)
        } throws: { error in
            "\(error)".contains("'x'")
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func integersOutOfRangeFallBackAloneAndAreKept() throws {
        struct Sizes: SettingsModel, Codable, Equatable {
            var small: Int8 = 0
            var count = 0
            var unsigned: UInt = 0
            var label = "sizes"
        }
        let dir = try TemporaryDirectory()
        let url = dir.file("sizes.plist")
        let hostile: PlistDictionary = [
            "small": 300, "count": .integer(PlistInteger(UInt64.max)), "unsigned": -1, "label": "kept",
        ]
        try PlistValue.dictionary(hostile).write(to: url)
        var model = try Sizes.load(from: url)
        #expect(model == { var m = Sizes(); m.label = "kept"; return m }())
        model.label = "changed"
        try model.save(to: url)
        var expected = hostile
        expected["label"] = "changed"
        #expect(try stored(url) == expected)
    }
}
