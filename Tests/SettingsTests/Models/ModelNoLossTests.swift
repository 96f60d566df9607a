import Foundation
import Settings
import SettingsTestSupport
import Testing

/// A model with nested values: arrays of elements, a nested struct, a string-keyed dictionary.
struct Fleet: SettingsModel, Codable, Equatable {
    struct Server: Codable, Equatable {
        var host: String
        var port: Int
        var note: String?
    }
    struct Window: Codable, Equatable {
        var zoom = 1.0
        var title = "Main"
    }
    var name = "fleet"
    var servers: [Server] = []
    var scores: [Int] = []
    var window = Window()
    var byName: [String: Server] = [:]
}

/// A model at schema version 2 (a newer program writes version 3).
struct VersionedProfile: SettingsModel, Codable, Equatable {
    var displayName = "Guest"
    static let migrations = SettingsMigrations { m in
        m.renameKey("name", to: "displayName", inVersion: 1)
        m.renameKey("nick", to: "displayName", inVersion: 2)
    }
}

/// A model whose own decoding code refuses data outside any field.
struct Validated: SettingsModel, Codable, Equatable {
    var low = 0
    var high = 10
    init() {}
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        low = try container.decode(Int.self, forKey: .low)
        high = try container.decode(Int.self, forKey: .high)
        guard low <= high else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "low > high"))
        }
    }
}

/// The promise of Docs/ModelFiles.md: model files and `@StoredModel`s never lose data, whatever
/// their `$version` says.
@Suite("Models never lose data")
struct ModelNoLossTests {
    private func stored(_ url: URL) throws -> PlistDictionary {
        try #require(try PlistValue(contentsOf: url).dictionaryValue)
    }

    // MARK: 1. Per-field fallback

    @Test func anUndecodableOptionalFieldFallsBackAloneAndItsStoredValueSurvives() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("ada.plist")
        try PlistValue.dictionary(["name": "Ada", "volume": 0.7, "nickname": 42]).write(to: url)
        var profile = try Profile.load(from: url)
        #expect(profile.name == "Ada")
        #expect(profile.volume == 0.7)
        #expect(profile.nickname == nil)
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field 'nickname'").isEmpty)
        try profile.save(to: url)
        #expect(try stored(url) == ["name": "Ada", "volume": 0.7, "favourites": [], "nickname": 42])
        profile.volume = 0.8                                 // another field changed: 42 still kept
        try profile.save(to: url)
        #expect(try stored(url)["nickname"] == 42)
        #expect(try stored(url)["volume"] == 0.8)
        profile.nickname = "Ada L."                          // changed by the program: written
        try profile.save(to: url)
        #expect(try stored(url)["nickname"] == "Ada L.")
        profile.nickname = nil                               // and later removed: stays removed
        try profile.save(to: url)
        #expect(try stored(url)["nickname"] == nil)
    }

    @Test func aStoredModelKeepsAnUndecodableFieldWhenAnotherChanges() {
        let store = SettingsStore.inMemory(["profile": ["name": "Ada", "volume": 0.7, "nickname": 42]])
        let model = StoredModel<Profile>("profile", store: store)
        var profile = model.wrappedValue
        #expect(profile.name == "Ada" && profile.volume == 0.7 && profile.nickname == nil)
        profile.volume = 0.9
        model.wrappedValue = profile
        #expect(store["profile/nickname"] == 42)
        #expect(store["profile/volume"] == 0.9)
    }

    @Test func severalBadFieldsFallBackEachOnTheirOwn() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("p.plist")
        try PlistValue.dictionary(["name": "Ada", "volume": "loud", "nickname": 42, "favourites": ["jazz", 7, "soul"]]).write(to: url)
        let profile = try Profile.load(from: url)
        #expect(profile.name == "Ada")
        #expect(profile.volume == 0.5)
        #expect(profile.nickname == nil)
        #expect(profile.favourites == ["jazz", "soul"])
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field 'volume'").isEmpty)
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field 'favourites[1]'").isEmpty)
        try profile.save(to: url)
        #expect(try stored(url) == ["name": "Ada", "volume": "loud", "favourites": ["jazz", 7, "soul"], "nickname": 42])
    }

    @Test func aNestedFieldFallsBackWithoutResettingItsSiblings() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("f.plist")
        try PlistValue.dictionary(["name": "prod", "window": ["zoom": "big", "title": "Ops"]]).write(to: url)
        let fleet = try Fleet.load(from: url)
        #expect(fleet.name == "prod")
        #expect(fleet.window == Fleet.Window(zoom: 1.0, title: "Ops"))
        try fleet.save(to: url)
        #expect(try stored(url)["window"] == ["zoom": "big", "title": "Ops"])
    }

    @Test func aMarkedFieldModelKeepsItsOtherFields() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("d.plist")
        try PlistValue.dictionary(["title": "Notes", "Words": "many", "tags": ["a"]]).write(to: url)
        let document = try Document.load(from: url)
        #expect(document.title == "Notes" && document.tags == ["a"] && document.wordCount == 0)
        try document.save(to: url)
        #expect(try stored(url)["Words"] == "many")
    }

    @Test func aModelThatCannotBeReadAtAllIsWrittenBackUnchangedUntilChanged() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("v.plist")
        try PlistValue.dictionary(["low": 5, "high": 1, "extra": "x"]).write(to: url)
        var model = try Validated.load(from: url)
        #expect(model == Validated())
        try model.save(to: url)
        #expect(try stored(url) == ["low": 5, "high": 1, "extra": "x"])
        model.high = 20
        try model.save(to: url)
        #expect(try stored(url)["high"] == 20)
        #expect(try stored(url)["extra"] == "x")
    }

    // MARK: 2. Versions

    @Test func savingAFileFromANewerVersionNeverLowersItsVersion() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("v.plist")
        try PlistValue.dictionary(["$version": 3, "displayName": "Ada", "badge": "gold"]).write(to: url)
        var profile = try VersionedProfile.load(from: url)
        #expect(profile.displayName == "Ada")
        profile.displayName = "Ada L."
        try profile.save(to: url)
        #expect(try stored(url) == ["displayName": "Ada L.", "badge": "gold", "$version": 3])
        // An older file is brought up to this program's version.
        try PlistValue.dictionary(["$version": 1, "nick": "Al"]).write(to: url)
        try VersionedProfile.load(from: url).save(to: url)
        #expect(try stored(url) == ["displayName": "Al", "$version": 2])
    }

    @Test func aStoredModelFromANewerVersionKeepsItsVersion() {
        let store = SettingsStore.inMemory(["profile": ["$version": 5, "displayName": "Ada", "badge": "gold"]])
        let model = StoredModel<VersionedProfile>("profile", store: store)
        var profile = model.wrappedValue
        profile.displayName = "Bea"
        model.wrappedValue = profile
        #expect(store["profile"] == ["displayName": "Bea", "badge": "gold", "$version": 5])
    }

    // MARK: 3. Unknown keys at every depth

    @Test func unknownKeysInsideArrayElementsAndNestedDictionariesAreKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("f.plist")
        try PlistValue.dictionary([
            "servers": [["host": "a", "port": 1, "tls": true], ["host": "b", "port": 2, "note": "n", "tls": false]],
            "window": ["zoom": 2.0, "title": "Ops", "docked": true],
            "byName": ["x": ["host": "x", "port": 9, "weight": 3]],
        ]).write(to: url)
        var fleet = try Fleet.load(from: url)
        try #require(fleet.servers.map(\.host) == ["a", "b"])
        fleet.servers[0].port = 443
        fleet.servers[1].note = nil                         // known field removed: not resurrected
        fleet.window.zoom = 3.0
        fleet.byName["x"]?.port = 10
        try fleet.save(to: url)
        let file = try stored(url)
        #expect(file["servers"] == [["host": "a", "port": 443, "tls": true], ["host": "b", "port": 2, "tls": false]])
        #expect(file["window"] == ["zoom": 3.0, "title": "Ops", "docked": true])
        #expect(file["byName"] == ["x": ["host": "x", "port": 10, "weight": 3]])
    }

    @Test func unknownKeysInsideArrayElementsAreKeptInStoredModels() throws {
        let store = SettingsStore.inMemory(["fleet": ["servers": [["host": "a", "port": 1, "tls": true]]]])
        let model = StoredModel<Fleet>("fleet", store: store)
        var fleet = model.wrappedValue
        try #require(fleet.servers.count == 1)
        fleet.servers[0].port = 2
        model.wrappedValue = fleet
        #expect(store["fleet/servers"] == [["host": "a", "port": 2, "tls": true]])
    }

    // MARK: 4. Quarantine

    @Test func aMalformedModelFileIsMovedAsideNotOverwritten() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("bad.plist")
        let bad = Data("<plist><dict>\n<key>name</key><strin>Ada</strin></dict></plist>".utf8)
        try bad.write(to: url)
        var profile = Profile()
        profile.name = "Bea"
        try profile.save(to: url)
        #expect(try Profile.load(from: url).name == "Bea")
        let aside = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("bad.plist.corrupt-") }
        #expect(aside.count == 1)
        let first = try #require(aside.first)
        #expect(try Data(contentsOf: dir.file(first)) == bad)
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path):2:").filter { $0.message.contains("moved aside to") }.isEmpty)
        // At most three are kept.
        for _ in 0..<4 {
            try bad.write(to: url)
            try profile.save(to: url)
        }
        let kept = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("bad.plist.corrupt-") }
        #expect(kept.count == 3)
    }

    @Test func aModelFileWhoseRootIsNotADictionaryIsMovedAside() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("list.plist")
        try PlistValue.array(["Ada"]).write(to: url)
        try Profile().save(to: url)
        let aside = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("list.plist.corrupt-") }
        #expect(aside.count == 1)
    }

    // MARK: 5. Bad array elements

    @Test func oneBadArrayElementDropsOnlyThatElementAndItIsKeptOnSave() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("f.plist")
        let bad: PlistValue = ["host": "b", "port": "eighty"]
        try PlistValue.dictionary([
            "servers": [["host": "a", "port": 1], bad, ["host": "c", "port": 3]],
            "scores": [1, "two", 3],
            "byName": ["ok": ["host": "o", "port": 1], "broken": ["host": 5]],
        ]).write(to: url)
        var fleet = try Fleet.load(from: url)
        try #require(fleet.servers.map(\.host) == ["a", "c"])
        #expect(fleet.scores == [1, 3])
        #expect(fleet.byName.keys.sorted() == ["ok"])
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field 'servers[1]'").isEmpty)
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): field 'byName.broken'").isEmpty)
        try fleet.save(to: url)                              // unchanged: everything stays as stored
        #expect(try stored(url)["servers"] == [["host": "a", "port": 1], bad, ["host": "c", "port": 3]])
        #expect(try stored(url)["scores"] == [1, "two", 3])
        #expect(try stored(url)["byName"] == ["ok": ["host": "o", "port": 1], "broken": ["host": 5]])
        fleet.servers[1].port = 30                           // edited in place: the bad one keeps its position
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == [["host": "a", "port": 1], bad, ["host": "c", "port": 30]])
        fleet.servers.append(Fleet.Server(host: "d", port: 4))   // positions changed: the good ones are all kept
        try fleet.save(to: url)
        #expect(try Fleet.load(from: url).servers.map(\.host) == ["a", "c", "d"])
    }

    @Test func badElementsInAStoredModelDropOnlyThemselves() {
        let store = SettingsStore.inMemory(["fleet": ["servers": [["host": "a", "port": 1], ["host": 2], ["host": "c", "port": 3]]]])
        let model = StoredModel<Fleet>("fleet", store: store)
        #expect(model.wrappedValue.servers.map(\.host) == ["a", "c"])
        var fleet = model.wrappedValue
        fleet.name = "renamed"
        model.wrappedValue = fleet
        #expect(store["fleet/servers"] == [["host": "a", "port": 1], ["host": 2], ["host": "c", "port": 3]])
    }

    @Test(.timeLimit(hangLimit)) func droppingBadElementsIsLinearInTheArraySize() {
        func fleet(_ count: Int) -> PlistDictionary {
            var servers: [PlistValue] = []
            servers.reserveCapacity(count)
            for i in 0..<count {
                let port: PlistValue = i % 2 == 0 ? .integer(PlistInteger(Int64(i))) : .string("bad")
                servers.append(.dictionary(["host": .string("h\(i)"), "port": port]))
            }
            return ["servers": .array(servers)]
        }
        let small = fleet(4_000), large = fleet(40_000)
        var kept: [Int] = [], reported: [Int] = []
        // One retry per bad element (quadratic) took minutes; 10x the elements must cost about 10x.
        let ratio = growth(from: 4_000, to: 40_000) { count in
            var issues: [ModelFieldIssue] = []
            let model = Fleet.unarchive(count == 4_000 ? small : large, issues: &issues)
            kept.append(model.servers.count)
            reported.append(issues.count)
        }
        #expect(isLinear(ratio, from: 4_000, to: 40_000), "10x the elements cost \(ratio)x the time")
        #expect(kept.last == 20_000 && reported.last == 20_000)
        #expect(kept.first == 2_000 && reported.first == 2_000)
    }

    // MARK: 6. Modes and format

    @Test func newModelFilesAreOwnerOnlyAndExistingModesAreKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appending(path: "new/sub/p.plist")
        try Profile().save(to: url)
        #expect(try dir.permissions(of: url) == 0o600)
        #expect(try dir.permissions(of: dir.url.appending(path: "new")) == 0o700)
        #expect(try dir.permissions(of: dir.url.appending(path: "new/sub")) == 0o700)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        try Profile().save(to: url)
        #expect(try dir.permissions(of: url) == 0o644)
    }

    @Test func aSymbolicLinkToAModelFileIsFollowed() throws {
        let dir = try TemporaryDirectory()
        let real = dir.file("real.plist")
        let link = dir.file("link.plist")
        try PlistValue.dictionary(["name": "Ada", "extra": 1]).write(to: real)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: real.path)
        var profile = try Profile.load(from: link)
        profile.volume = 0.9
        try profile.save(to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == real.path)
        #expect(try stored(real)["volume"] == 0.9)
        #expect(try stored(real)["extra"] == 1)
    }

    @Test func aFileChangedByAnotherProgramBetweenSavesIsReadAgain() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("p.plist")
        var profile = Profile()
        try profile.save(to: url)
        try profile.save(to: url)                            // unchanged file: not read again
        var edited = try stored(url)
        edited["addedByHand"] = "keep me"
        try PlistValue.dictionary(edited).write(to: url)     // edited by someone else
        profile.name = "Ada"
        try profile.save(to: url)
        #expect(try stored(url)["addedByHand"] == "keep me")
        #expect(try stored(url)["name"] == "Ada")
    }

    @Test func aModelFileKeepsItsFormat() throws {
        let dir = try TemporaryDirectory()
        let binary = dir.file("b.plist")
        let xml = dir.file("x.plist")
        try PlistValue.dictionary(["name": "Ada"]).write(to: binary, format: .binary)
        try PlistValue.dictionary(["name": "Ada"]).write(to: xml, format: .xml)
        try Profile.load(from: binary).save(to: binary)
        try Profile.load(from: xml).save(to: xml)
        #expect(try Data(contentsOf: binary).starts(with: Array("bplist00".utf8)))
        #expect(try !Data(contentsOf: xml).starts(with: Array("bplist00".utf8)))
        try Profile.load(from: binary).save(to: binary, format: .xml)     // asked for: converted
        #expect(try !Data(contentsOf: binary).starts(with: Array("bplist00".utf8)))
    }

    // MARK: 7. Odd versions
    // Odd `$version`s: never lowered, never migrated twice, unknown keys kept when a migration fails.

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
