import Foundation
import Observation
import Settings
import Synchronization
import Testing
import SettingsTestSupport

struct Profile: SettingsModel, Codable, Equatable {
    var name = "Guest"
    var volume = 0.5
    var favourites: [String] = []
    var nickname: String?
    @Transient var isEditing = true
}

/// The same model one schema later: a gained field, a removed one, a renamed and converted one.
struct ProfileV2: SettingsModel, Codable, Equatable {
    var displayName = "Guest"
    var volume = 0.5
    var theme = "system"                           // gained
    static let migrations = SettingsMigrations { m in
        m.renameKey("name", to: "displayName", inVersion: 1)
        m.convert("percent", inVersion: 2) { old in old.doubleValue.map { .real($0 / 100) } }
        m.renameKey("percent", to: "volume", inVersion: 2)
    }
}

struct Document: SettingsModel {
    @Archived var title = "Untitled"
    @Archived("Words") var wordCount = 0
    @Archived var tags: [String] = []
    var selection = 7                              // transient: not archived
}

/// Counts decodes, to prove reads are cached.
struct Counted: SettingsModel, Codable {
    static let decodes = Atomic<Int>(0)
    var value = 0
    init() {}
    init(from decoder: any Decoder) throws {
        Self.decodes.add(1, ordering: .relaxed)
        value = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .value)
    }
    enum CodingKeys: String, CodingKey { case value }
}

@Suite("Models")
struct ModelTests {
    @Test(arguments: [PlistFormat.xml, .binary])
    func codableModelsRoundTripThroughFiles(_ format: PlistFormat) throws {
        let dir = try TemporaryDirectory()
        var profile = Profile()
        profile.name = "Ada"
        profile.favourites = ["jazz"]
        profile.isEditing = false
        try profile.save(to: dir.file("p.plist"), format: format)
        let loaded = try Profile.load(from: dir.file("p.plist"))
        #expect(loaded.name == "Ada" && loaded.favourites == ["jazz"])
        #expect(loaded.isEditing == true)                                  // transient: initial value
        let stored = try #require(try PlistValue(contentsOf: dir.file("p.plist")).dictionaryValue)
        #expect(stored.keys == ["name", "volume", "favourites"])           // no isEditing, no nil nickname
        #expect(try Data(contentsOf: dir.file("p.plist")).starts(with: Array("bplist00".utf8)) == (format == .binary))
    }

    @Test func markedFieldModelsArchiveOnlyTheMarkedFields() throws {
        let dir = try TemporaryDirectory()
        var document = Document()
        document.title = "Notes"
        document.wordCount = 42
        document.selection = 99
        try document.save(to: dir.file("d.plist"))
        #expect(try PlistValue(contentsOf: dir.file("d.plist")) == ["title": "Notes", "Words": 42, "tags": []])
        let loaded = try Document.load(from: dir.file("d.plist"))
        #expect(loaded.title == "Notes" && loaded.wordCount == 42)
        #expect(loaded.selection == 7)
        // Copies are values: changing one does not change the other.
        var copy = loaded
        copy.title = "Copy"
        #expect(loaded.title == "Notes")
    }

    @Test func oldFilesLoadIntoNewModelsWithMigrationsAndDefaults() throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["name": "Ada", "percent": 80, "legacy": "keep me"]).write(to: dir.file())
        var profile = try ProfileV2.load(from: dir.file())
        #expect(profile.displayName == "Ada")
        #expect(profile.volume == 0.8)
        #expect(profile.theme == "system")                                 // gained field: default
        profile.theme = "dark"
        try profile.save(to: dir.file())
        let stored = try PlistValue(contentsOf: dir.file())
        #expect(stored["legacy"] == "keep me")                             // unknown key kept
        #expect(stored["$version"] == 2)
        #expect(stored["name"] == nil && stored["percent"] == nil)
        #expect(try ProfileV2.load(from: dir.file()) == profile)          // migrations do not run twice
    }

    @Test func aFieldThatNoLongerDecodesIsReportedAndKeptOnDisk() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["name": "Ada", "volume": "loud", "favourites": ["a"]]).write(to: dir.file())
        var profile = try Profile.load(from: dir.file())
        #expect(profile.name == "Ada" && profile.favourites == ["a"])
        #expect(profile.volume == 0.5)
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(dir.file().path): field 'volume'").isEmpty)
        profile.name = "Ada L."
        try profile.save(to: dir.file())
        #expect(try PlistValue(contentsOf: dir.file())["volume"] == "loud")   // not dropped
        profile.volume = 0.9                                                  // changed: now written
        try profile.save(to: dir.file())
        #expect(try PlistValue(contentsOf: dir.file())["volume"] == 0.9)
    }

    @Test func anOptionalSetToNilIsRemovedNotResurrected() throws {
        let dir = try TemporaryDirectory()
        var profile = Profile()
        profile.nickname = "A"
        try profile.save(to: dir.file())
        var loaded = try Profile.load(from: dir.file())
        #expect(loaded.nickname == "A")
        loaded.nickname = nil
        try loaded.save(to: dir.file())
        #expect(try Profile.load(from: dir.file()).nickname == nil)
    }

    @Test func malformedAndMissingModelFilesGiveErrorsNamingTheFile() throws {
        let dir = try TemporaryDirectory()
        #expect(throws: SettingsError.self) { try Profile.load(from: dir.file("missing.plist")) }
        do {
            _ = try Profile.load(from: dir.file("missing.plist"))
        } catch {
            #expect(error.code == .missingFile)
        }
        try Data("<plist><dict>\n<key>name</key><strin>x</strin></dict></plist>".utf8).write(to: dir.file("bad.plist"))
        do {
            _ = try Profile.load(from: dir.file("bad.plist"))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidFile)
            #expect(error.description.hasPrefix("\(dir.file("bad.plist").path):2:"))
        }
    }

    @Test func storedModelsLiveUnderOneKeyAndReadsAreCached() throws {
        let store = SettingsStore.inMemory()
        let model = StoredModel<Counted>("counted", store: store)
        #expect(model.wrappedValue.value == 0)
        var next = Counted()
        next.value = 5
        model.wrappedValue = next
        let before = Counted.decodes.load(ordering: .relaxed)
        for _ in 0..<100 { #expect(model.wrappedValue.value == 5) }
        store["unrelated"] = 1                                   // another key changes: no re-decode
        #expect(model.wrappedValue.value == 5)
        #expect(Counted.decodes.load(ordering: .relaxed) == before)
        store["counted/value"] = 6                               // edited like a hand-edited plist
        #expect(model.wrappedValue.value == 6)
        #expect(Counted.decodes.load(ordering: .relaxed) == before + 1)
        #expect(store["counted"] == ["value": 6])
    }

    @Test func storedModelsAreObservedAndReset() {
        struct Holder { @StoredModel("profile", store: .inMemory()) var profile: Profile }
        let holder = Holder()
        let seen = Received<(String, String)>()
        let observation = holder.$profile.onChange { new, old in seen.append((new.name, old.name)) }
        holder.profile.name = "Ada"
        #expect(holder.$profile.isSet)
        holder.$profile.reset()
        #expect(!holder.$profile.isSet)
        #expect(holder.profile == Profile())
        #expect(seen.all.map(\.0) == ["Ada", "Guest"])
        #expect(seen.all.map(\.1) == ["Guest", "Ada"])
        _ = observation
    }

    @Test func storedModelsAreTrackedByTheObservationFramework() {
        struct Holder { @StoredModel("profile", store: .inMemory()) var profile: Profile }
        let holder = Holder()
        let fired = Received<String>()
        withObservationTracking {
            _ = holder.profile.name
        } onChange: {
            fired.append("profile")
        }
        holder.$profile.store["other"] = 1
        #expect(fired.all.isEmpty)
        holder.profile.volume = 0.9
        #expect(fired.all == ["profile"])
    }

    @Test func bindMovesStoredModelsToAStore() {
        struct Holder { @StoredModel("doc") var document: Document }
        let store = SettingsStore.inMemory(["doc": ["title": "From store"]])
        let holder = SettingsStore.bind(Holder(), to: store)
        #expect(holder.document.title == "From store")
        #expect(holder.$document.store === store)
    }

    @Test func storesMigrateTheirValuesOnce() throws {
        let store = SettingsStore.inMemory(["timeout": 30, "volume": 80])
        let changes = Received<SettingsChange>()
        let observation = store.onChange { changes.append($0) }
        let migrations = SettingsMigrations { m in
            m.renameKey("timeout", to: "Network/timeout", inVersion: 1)
            m.convert("volume", inVersion: 2) { old in old.intValue.map { .real(Double($0) / 100) } }
        }
        #expect(try store.migrate(with: migrations) == 0)
        #expect(store["Network/timeout"] == 30 && store["timeout"] == nil)
        #expect(store["volume"] == 0.8)
        #expect(store["$version"] == 2)
        #expect(changes.all.map(\.origin) == [.migration])
        #expect(try store.migrate(with: migrations) == 2)
        #expect(store["volume"] == 0.8)
        _ = observation
    }

    @Test func aFailingMigrationChangesNothing() {
        let store = SettingsStore.inMemory(["a": 1])
        struct Refused: Error {}
        let migrations = SettingsMigrations { m in
            m.renameKey("a", to: "b", inVersion: 1)
            m.step(toVersion: 2) { _ in throw Refused() }
        }
        #expect(throws: SettingsError.self) { try store.migrate(with: migrations) }
        #expect(store.contents(of: .user) == ["a": 1])
    }
}
