import Foundation
import Settings
import Testing
import SettingsTestSupport

// Attacks on model files and `@StoredModel` (issue 11, item 1), as a hostile user and a careless
// program would make them: unusual Codable shapes, hostile files, odd `$version`s. Each test
// checks that nothing crashes, problems are reported clearly, and what is stored survives.

/// Enums with associated values, a value that is a payload-free case, and an enum-keyed dictionary.
struct AttackShapes: SettingsModel, Codable, Equatable {
    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case rect(w: Int, h: Int)
        case empty
    }
    enum Kind: String, Codable, CodingKeyRepresentable {
        case alpha, beta
    }
    var name = "shapes"
    var shape: Shape = .circle(radius: 1)
    var byKind: [Kind: Int] = [:]
    var byNumber: [Int: String] = [:]
}

/// Optionals of arrays, Sets, Date, Data and URL fields.
struct AttackScalars: SettingsModel, Codable, Equatable {
    var tags: [String]?
    var unique: Set<String> = []
    var when = Date(timeIntervalSince1970: 0)
    var blob = Data()
    var link = URL(filePath: "/")
    var count = 0
}

/// An array of optionals: plists have no null.
struct AttackOptionalElements: SettingsModel, Codable, Equatable {
    var slots: [String?] = []
}

/// A set of structs: its order is the hashing order of the process that writes it.
struct AttackSetFleet: SettingsModel, Codable, Equatable {
    struct Member: Codable, Hashable {
        var host: String
        var port: Int
    }
    var name = "set"
    var members: Set<Member> = []
}

/// A nested value whose own decoding code throws, and one decoded through `superDecoder`.
struct AttackCustom: SettingsModel, Codable, Equatable {
    struct Range: Codable, Equatable {
        var low = 0
        var high = 1
        init() {}
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            low = try c.decode(Int.self, forKey: .low)
            high = try c.decode(Int.self, forKey: .high)
            if low > high { throw DecodingError.dataCorruptedError(forKey: .high, in: c, debugDescription: "high below low") }
        }
    }
    struct Wrapped: Codable, Equatable {
        var inner = 0
        init() {}
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            inner = try Int(from: c.superDecoder(forKey: .inner))
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try inner.encode(to: c.superEncoder(forKey: .inner))
        }
        enum CodingKeys: String, CodingKey { case inner }
    }
    var range = Range()
    var wrapped = Wrapped()
    var label = "custom"
}

/// A recursive value: a linked list nested as deep as the program likes.
struct AttackDeep: SettingsModel, Codable, Equatable {
    indirect enum Chain: Codable, Equatable, Sendable {
        case end
        case link(Int, Chain)
    }
    var chain: Chain = .end
    var label = "deep"
}

/// A model that reports on what the file holds, at schema version 2.
struct AttackVersioned: SettingsModel, Codable, Equatable {
    var value = 0
    var label = "v"
    static let migrations = SettingsMigrations { m in
        m.convert("value", inVersion: 1) { old in old.intValue.map { .integer(PlistInteger(Int64($0 * 10))) } }
        m.step(toVersion: 2) { _ in }
    }
}

/// A model the attacks use when the shape does not matter.
struct AttackPlain: SettingsModel, Codable, Equatable {
    var name = "Guest"
    var volume = 0.5
}

@Suite("Model attacks")
struct ModelAttackTests {
    private func stored(_ url: URL) throws -> PlistDictionary {
        try #require(try PlistValue(contentsOf: url).dictionaryValue)
    }

    private func corruptCopies(in dir: TemporaryDirectory, of name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("\(name).corrupt-") }
    }

    // MARK: Codable shapes

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

    @Test(.timeLimit(hangLimit)) func aThousandLevelsDeepDoNotCrashAndWhatIsSavedLoadsBack() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("deep.plist")
        var chain = AttackDeep.Chain.end
        for i in 0..<1_000 { chain = .link(i, chain) }
        var model = AttackDeep()
        model.chain = chain
        do {
            try model.save(to: url)
        } catch {
            // Refusing is fine if the message is clear and nothing was written.
            #expect(error.description.contains("deep") || error.description.contains("nest"), "unclear: \(error)")
            #expect(!FileManager.default.fileExists(atPath: url.path))
            return
        }
        // Written: then this program must be able to read its own file back.
        #expect(try AttackDeep.load(from: url) == model)
    }

    @Test(.timeLimit(hangLimit)) func aFileNestedAThousandLevelsDeepIsRefusedClearlyAndKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("deep.plist")
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>label</key><string>x</string><key>extra</key>"
        xml += String(repeating: "<array>", count: 1_000) + String(repeating: "</array>", count: 1_000)
        xml += "</dict></plist>"
        try Data(xml.utf8).write(to: url)
        #expect {
            try AttackDeep.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path) && "\(error)".contains("deep")
        }
        var model = AttackDeep()
        model.label = "new"
        try model.save(to: url)
        let aside = try corruptCopies(in: dir, of: "deep.plist")
        #expect(aside.count == 1)
        if let first = aside.first { #expect(try Data(contentsOf: dir.file(first)) == Data(xml.utf8)) }
    }

    @Test(.timeLimit(hangLimit)) func aHugeArrayWithEveryElementBadIsKeptWhole() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("huge.plist")
        let bad = (0..<30_000).map { i -> PlistValue in ["host": .integer(PlistInteger(Int64(i)))] }
        try PlistValue.dictionary(["name": "n", "servers": .array(bad)]).write(to: url, format: .binary)
        // 30,000 reports, one per bad element (that each report costs the same is checked by
        // `reportingDiagnosticsCostsTheSameEachTime`, by how the cost grows, not by a clock).
        var fleet = try Fleet.load(from: url)
        #expect(fleet.servers.isEmpty)
        #expect(fleet.name == "n")
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad))
        fleet.name = "m"
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad))
        // Appending one server must not throw away the 30,000 this program cannot read.
        fleet.servers.append(Fleet.Server(host: "new", port: 1))
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad + [["host": "new", "port": 1]]))
        #expect(try Fleet.load(from: url).servers == [Fleet.Server(host: "new", port: 1)])
    }

    @Test(.timeLimit(hangLimit)) func reportingDiagnosticsCostsTheSameEachTime() {
        let store = SettingsStore.inMemory([:])
        store.diagnosticsHandler = { _ in }
        // Reading a handler is what piled up thunks (the mutex's `inout` wrote it back
        // re-abstracted), so each report cost more than the last: 30,000 of each took about 25 s.
        // Only read here: setting the process-wide one would race other tests.
        let ratio = growth(from: 3_000, to: 30_000) { count in
            for _ in 0..<count {
                _ = SettingsDiagnostics.handler
                store.diagnosticsHandler?(SettingsDiagnostic(.typeMismatch, "x"))
            }
        }
        #expect(isLinear(ratio, from: 3_000, to: 30_000), "10x the reports cost \(ratio)x the time")
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

    @Test func aStringXMLCannotCarryMakesTheFileBinaryUnlessXMLWasAskedFor() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("esc.plist")
        try PlistValue.dictionary(["name": "Ada", "extra": 1]).write(to: url)
        var model = try AttackPlain.load(from: url)
        model.name = "\u{1B}]0;title\u{07}"
        // XML asked for by name: refused, naming the file; the file is left as it was.
        let before = try Data(contentsOf: url)
        #expect {
            try model.save(to: url, format: .xml)
        } throws: { error in
            "\(error)".contains(url.path)
        }
        #expect(try Data(contentsOf: url) == before)
        // XML by the file's format: the file becomes binary, reported, and reads back whole.
        try model.save(to: url)
        #expect(try Data(contentsOf: url).starts(with: Array("bplist00".utf8)))
        #expect(try AttackPlain.load(from: url) == model)
        #expect(try stored(url)["extra"] == 1)
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): saved as a binary property list").isEmpty)
    }

    // MARK: Files

    @Test func anEmptyFileIsRefusedOnLoadAndMovedAsideOnSave() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("empty.plist")
        try Data().write(to: url)
        #expect {
            try AttackPlain.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path)
        }
        try AttackPlain().save(to: url)
        #expect(try AttackPlain.load(from: url) == AttackPlain())
    }

    @Test func aDirectoryInPlaceOfTheFileIsRefusedAndLeftAlone() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("dir.plist")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: url.appending(path: "inside"))
        #expect {
            try AttackPlain.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path) && "\(error)".contains("directory")
        }
        #expect {
            try AttackPlain().save(to: url)
        } throws: { error in
            "\(error)".contains(url.path)
        }
        #expect(try Data(contentsOf: url.appending(path: "inside")) == Data("keep".utf8))
    }

    @Test(.timeLimit(hangLimit)) func aSymbolicLinkLoopIsRefusedClearly() throws {
        let dir = try TemporaryDirectory()
        let a = dir.file("a.plist")
        let b = dir.file("b.plist")
        try FileManager.default.createSymbolicLink(atPath: a.path, withDestinationPath: b.path)
        try FileManager.default.createSymbolicLink(atPath: b.path, withDestinationPath: a.path)
        #expect {
            try AttackPlain.load(from: a)
        } throws: { error in
            "\(error)".contains("a.plist") || "\(error)".contains("b.plist")
        }
        #expect(throws: SettingsError.self) { try AttackPlain().save(to: a) }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: a.path) == b.path)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: b.path) == a.path)
    }

    @Test func aSaveThatCannotWriteThrowsAndLeavesTheFileIntact() throws {
        // Runs as root in CI, where a read-only directory does not stop writes: a parent that
        // is a file does, for anyone.
        let dir = try TemporaryDirectory()
        let blocker = dir.file("blocker")
        try Data("not a directory".utf8).write(to: blocker)
        #expect {
            try AttackPlain().save(to: blocker.appending(path: "p.plist"))
        } throws: { error in
            "\(error)".contains("blocker")
        }
        #expect(try Data(contentsOf: blocker) == Data("not a directory".utf8))
        // And a directory whose write permission is gone, where that is enforced.
        let locked = dir.url.appending(path: "locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        let url = locked.appending(path: "p.plist")
        try PlistValue.dictionary(["name": "Ada", "extra": 1]).write(to: url)
        let before = try Data(contentsOf: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: locked.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: locked.path) }
        var model = try AttackPlain.load(from: url)
        model.name = "Bea"
        if getuid() != 0 {
            #expect(throws: SettingsError.self) { try model.save(to: url) }
            #expect(try Data(contentsOf: url) == before)
        }
    }

    @Test func aFileRewrittenInPlaceBetweenLoadAndSaveIsReadAgain() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("p.plist")
        try PlistValue.dictionary(["name": "Ada", "volume": 0.5, "aa": 1]).write(to: url)
        var model = try AttackPlain.load(from: url)
        // Same size, same inode, written in place by another process.
        let edited = try PlistValue.dictionary(["name": "Ada", "volume": 0.5, "bb": 2]).encoded(as: .xml)
        let handle = try FileHandle(forWritingTo: url)
        try handle.write(contentsOf: edited)
        try handle.close()
        model.volume = 0.75
        try model.save(to: url)
        #expect(try stored(url) == ["name": "Ada", "volume": 0.75, "bb": 2])
    }

    @Test(.timeLimit(hangLimit)) func aBinaryFileWithSharedObjectsLoadsAndKeepsItsValues() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("dag.plist")
        // Objects: 0 root, 1 "Ada", 2 "name", 3 first array, 4 "extra", 5.. the rest, leaf last.
        var objects: [[UInt8]] = [[0xD2, 2, 4, 1, 3], [0x53] + Array("Ada".utf8), [0x54] + Array("name".utf8), [0xA2, 5, 5], [0x55] + Array("extra".utf8)]
        let levels = 10
        for level in 0..<levels { objects.append([0xA2, UInt8(6 + level), UInt8(6 + level)]) }
        objects.append([0x10, 42])
        try Data(binaryPlist(objects)).write(to: url)
        let expected = try PlistValue(contentsOf: url)
        var model = try AttackPlain.load(from: url)
        #expect(model.name == "Ada")
        model.volume = 0.1
        try model.save(to: url)
        var after = try stored(url)
        after["volume"] = nil
        #expect(PlistValue.dictionary(after) == expected)
        // A DAG too big to expand is refused with the file named, and kept aside on save.
        var huge: [[UInt8]] = [[0xD1, 1, 2], [0x55] + Array("extra".utf8)]
        for level in 0..<60 { huge.append([0xA2, UInt8(3 + level), UInt8(3 + level)]) }
        huge.append([0x10, 1])
        let hugeFile = Data(binaryPlist(huge))
        try hugeFile.write(to: url)
        #expect {
            try AttackPlain.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path)
        }
        try AttackPlain().save(to: url)
        let aside = try corruptCopies(in: dir, of: "dag.plist")
        #expect(aside.count == 1)
        if let first = aside.first { #expect(try Data(contentsOf: dir.file(first)) == hugeFile) }
    }

    @Test func truncatedFilesAreRefusedWithThePathAndMovedAsideOnSave() throws {
        let dir = try TemporaryDirectory()
        let full: PlistValue = ["name": "Ada", "volume": 0.3, "extra": ["a", "b"]]
        for format in [PlistFormat.xml, .binary] {
            let bytes = try full.encoded(as: format)
            // XML cut inside `</plist>` (a missing final newline is no truncation); binary
            // cut anywhere loses its trailer.
            for cut in [1, bytes.count / 2, bytes.count - (format == .xml ? 5 : 1)] {
                let url = dir.file("t-\(format)-\(cut).plist")
                let truncated = bytes.prefix(cut)
                try truncated.write(to: url)
                #expect {
                    try AttackPlain.load(from: url)
                } throws: { error in
                    "\(error)".contains(url.path)
                }
                try AttackPlain().save(to: url)
                let aside = try corruptCopies(in: dir, of: url.lastPathComponent)
                #expect(aside.count == 1)
                if let first = aside.first { #expect(try Data(contentsOf: dir.file(first)) == truncated) }
            }
        }
    }

    @Test(.timeLimit(hangLimit)) func aFIFOOrAnEmptyPathIsRefusedWithoutBlocking() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.file("fifo.plist")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        #expect {
            try AttackPlain.load(from: fifo)
        } throws: { error in
            "\(error)".contains(fifo.path)
        }
        #expect(throws: SettingsError.self) { try AttackPlain().save(to: fifo) }
        var kind = stat()
        #expect(lstat(fifo.path, &kind) == 0 && (kind.st_mode & S_IFMT) == S_IFIFO)
        #expect(throws: SettingsError.self) { try AttackPlain.load(from: URL(filePath: "")) }
        #expect(throws: SettingsError.self) { try AttackPlain.load(from: dir.url) }
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

    // MARK: $version

    @Test func aVersionThatIsNotAnIntegerIsReportedAndNeverLowered() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        for (name, version) in [("string", PlistValue.string("7")), ("real", .real(7.5)), ("huge", .integer(PlistInteger(UInt64.max)))] {
            let url = dir.file("\(name).plist")
            try PlistValue.dictionary(["$version": version, "value": 3, "label": "x"]).write(to: url)
            // Not a version this program can read: loading must not run migrations over data
            // they may already have run on (value 3 becoming 30), nor lose the version.
            let loaded: AttackVersioned
            do {
                loaded = try AttackVersioned.load(from: url)
            } catch {
                #expect(error.description.contains(url.path) && error.description.contains("$version"), "unclear: \(error)")
                continue
            }
            #expect(loaded.value == 3, "\(name): migrations ran again")
            try loaded.save(to: url)
            #expect(try stored(url)["$version"] == version, "\(name): version changed")
        }
    }

    @Test func negativeAndHugeIntegerVersionsAreHandled() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("v.plist")
        // Negative: older than anything; every step runs, and the current version is written.
        try PlistValue.dictionary(["$version": -4, "value": 3]).write(to: url)
        let old = try AttackVersioned.load(from: url)
        #expect(old.value == 30)
        try old.save(to: url)
        #expect(try stored(url)["$version"] == 2)
        // Huge: newer than this program; nothing runs, and the version stays.
        try PlistValue.dictionary(["$version": .integer(PlistInteger(Int64.max)), "value": 3]).write(to: url)
        let newer = try AttackVersioned.load(from: url)
        #expect(newer.value == 3)
        try newer.save(to: url)
        #expect(try stored(url)["$version"] == .integer(PlistInteger(Int64.max)))
    }

    @Test func aStoreWhoseVersionIsBeyondIntIsNeverLowered() throws {
        let huge = PlistValue.integer(PlistInteger(UInt64.max))
        let store = SettingsStore.inMemory(["$version": huge, "a": 1])
        try store.migrate(with: SettingsMigrations { m in m.renameKey("a", to: "b", inVersion: 1) })
        #expect(store["$version"] == huge)
        #expect(store["a"] == 1)
        let text = SettingsStore.inMemory(["$version": "1", "a": 1])
        #expect(throws: SettingsError.self) {
            try text.migrate(with: SettingsMigrations { m in m.renameKey("a", to: "b", inVersion: 1) })
        }
        #expect(text["a"] == 1)
    }

    @Test func savingOverAFileWhoseMigrationFailsKeepsItsUnknownKeys() throws {
        struct Strict: SettingsModel, Codable, Equatable {
            var volume = 0.5
            static let migrations = SettingsMigrations { m in
                m.convert("percent", inVersion: 1) { old in
                    guard let number = old.doubleValue else { throw SettingsError(.typeMismatch, detail: "percent is not a number") }
                    return .real(number / 100)
                }
                m.renameKey("percent", to: "volume", inVersion: 1)
            }
        }
        let dir = try TemporaryDirectory()
        let url = dir.file("strict.plist")
        try PlistValue.dictionary(["percent": "loud", "keep": "me"]).write(to: url)
        #expect {
            try Strict.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path) && "\(error)".contains("convert 'percent'")
        }
        // A careless program saves a fresh model over it anyway: what it does not know stays.
        try Strict().save(to: url)
        #expect(try stored(url)["keep"] == "me")
        #expect(try stored(url)["percent"] == "loud")
    }

    @Test func aStoredModelWithAStringVersionIsNotMigratedAgain() {
        let store = SettingsStore.inMemory(["m": ["$version": "2", "value": 3]])
        let model = StoredModel<AttackVersioned>("m", store: store)
        #expect(model.wrappedValue.value == 3 || model.wrappedValue.value == 0)
        var value = model.wrappedValue
        value.label = "changed"
        model.wrappedValue = value
        #expect(store["m/value"] == 3)
    }
}

/// A binary plist of `objects` (already encoded), the first one at the top, with one-byte
/// references and offsets.
private func binaryPlist(_ objects: [[UInt8]]) -> [UInt8] {
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
        offsets.append(out.count)
        out += object
    }
    let table = out.count
    let offsetSize = offsets.last.map { $0 > 255 ? 2 : 1 } ?? 1
    for offset in offsets {
        out += offsetSize == 2 ? [UInt8(offset >> 8), UInt8(offset & 0xFF)] : [UInt8(offset)]
    }
    out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), 1]
    for value in [UInt64(objects.count), 0, UInt64(table)] {
        out += (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
    return out
}
