#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import Settings
import SettingsFiles
import SettingsPlist
import SettingsTestSupport
import Testing

private struct RenamedSettings {
    let store: SettingsStore
    @Setting var timeout: Int

    init(store: SettingsStore) {
        self.store = store
        _timeout = Setting("Network/timeout", formerly: ["timeout", "NetTimeout"], default: 30, store: store)
    }
}

struct RenamedKeyTests {
    @Test func aSettingReadsItsOldNameWhenTheNewOneIsAbsent() {
        let store = SettingsStore.inMemory(["NetTimeout": 7, "timeout": 12])
        let settings = RenamedSettings(store: store)
        #expect(settings.timeout == 12)  // the first old name present wins
        #expect(store["Network/timeout"] == 12)
        #expect(store["timeout"] == nil)
        #expect(store["NetTimeout"] == 7)  // an old name not used is left as it is, never dropped
    }

    @Test func theNewNameWinsOverAnOldOne() {
        let store = SettingsStore.inMemory(["Network": ["timeout": 5], "timeout": 12])
        let settings = RenamedSettings(store: store)
        #expect(settings.timeout == 5)
        #expect(store["timeout"] == 12)
    }

    @Test func theFirstSaveMovesTheValueAndARestartReadsIt() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["timeout": 12, "other": "kept"]).write(to: dir.file())
        let first = SettingsStore.file(dir.file(), autosaveDelay: nil)
        var changes = first.changes.makeAsyncIterator()
        let settings = RenamedSettings(store: first)
        #expect(settings.timeout == 12)
        let change = await nextChange(&changes) { $0.origin == .migration }
        #expect(change?.keys.sorted { $0.path < $1.path } == ["Network", "timeout"], "\(String(describing: change))")
        try await first.flush()

        let onDisk = try PlistValue(contentsOf: dir.file())
        #expect(onDisk["Network"]?["timeout"] == 12)
        #expect(onDisk["timeout"] == nil)
        #expect(onDisk["other"] == "kept")

        // A second store on the same file (a restart): the value is where it was moved.
        let second = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(second["Network/timeout"] == 12)
        #expect(RenamedSettings(store: second).timeout == 12)
    }

    @Test func withoutASaveTheOldNameStaysOnDisk() throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["timeout": 12]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(RenamedSettings(store: store).timeout == 12)
        // Nothing saved yet (a crash now): the file still has the value under its old name.
        #expect(try PlistValue(contentsOf: dir.file())["timeout"] == 12)
        // A restart reads it again.
        #expect(RenamedSettings(store: SettingsStore.file(dir.file(), autosaveDelay: nil)).timeout == 12)
    }

    @Test func argumentsEnvironmentAndOverridesUnderAnOldNameApplyWithOneDiagnosticEach() throws {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let name = "Renamed\(UUID().uuidString.prefix(8))"
        let key = SettingsKey("Net/\(name)")
        store.registerRename(of: key, formerly: [SettingsKey(name)])
        store.applyArguments(["app", "-\(name)", "9"])
        #expect(store[key] == 9)
        #expect(store.source(of: key) == .volatile)
        store.applyArguments(["app", "-\(name)", "10"])
        #expect(store[key] == 10)
        let deprecated = DiagnosticsRecorder.diagnostics(for: key).filter { $0.kind == .deprecatedKey }
        #expect(deprecated.count == 1)
        #expect(deprecated.first?.message == "command-line argument -\(name) uses '\(name)', the old name of 'Net/\(name)'; applied to 'Net/\(name)' (use the new name)")

        let dir = try TemporaryDirectory()
        try PlistValue.dictionary([name: 3]).write(to: dir.file("overrides.plist"))
        let other = SettingsStore.inMemory()
        other.registerRename(of: key, formerly: [SettingsKey(name)])
        try other.loadOverrides(contentsOf: dir.file("overrides.plist"))
        #expect(other[key] == 3)
        #expect(other.source(of: key) == .overrides)
        #expect(DiagnosticsRecorder.diagnostics(for: key).filter { $0.kind == .deprecatedKey }.count == 2)
    }

    @Test func anOldNameGivenBeforeTheRenameIsDeclaredStillApplies() {
        let store = SettingsStore.inMemory()
        store.applyEnvironment(prefix: "RENAMEDAPP", ["RENAMEDAPP_TIMEOUT": "4"])
        #expect(store["TIMEOUT"] == 4)
        store.registerRename(of: "Network/timeout", formerly: ["TIMEOUT"])
        #expect(store["Network/timeout"] == 4)
        #expect(store.explain("Network/timeout").rows.first?.source == "environment variable RENAMEDAPP_TIMEOUT")
    }

    @Test func defaultsUnderAnOldNameApply() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["timeout": 45])
        let settings = RenamedSettings(store: store)
        #expect(settings.timeout == 45)
        #expect(store.source(of: "Network/timeout") == .defaults)
    }

    @Test func aTypedKeyDeclaresItsOldNames() {
        let store = SettingsStore.inMemory(["limit": 8])
        let key = SettingsStore.Key<Int>("Limits/max", formerly: ["limit"], default: 1)
        #expect(store[key] == 8)
        #expect(store.formerNames(of: "Limits/max") == ["limit"])
    }

    @Test func aKeylessSettingDeclaresItsOldNamesWhenBound() {
        struct Limits {
            @Setting(formerly: ["maxItems"], default: 1) var limit: Int
        }
        let store = SettingsStore.inMemory(["maxItems": 6])
        let limits = SettingsStore.bind(Limits(), to: store)
        #expect(limits.limit == 6)
        #expect(store.formerNames(of: "Limit") == ["maxItems"])
    }

    @Test func aStoredModelReadsAndMovesItsOldKey() {
        struct Profile: SettingsModel, Codable {
            var name = "Ada"
        }
        let store = SettingsStore.inMemory(["profile": ["name": "Grace"]])
        let model = StoredModel<Profile>("Profiles/main", formerly: ["profile"], store: store)
        #expect(model.wrappedValue.name == "Grace")
        #expect(store["profile"] == nil)
        #expect(store["Profiles/main/name"] == "Grace")
    }

    @Test(.timeLimit(hangLimit)) func aValueAnOlderProgramWritesUnderTheOldNameIsMovedWhenReloaded() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let settings = RenamedSettings(store: store)
        var changes = store.changes.makeAsyncIterator()
        #expect(settings.timeout == 30)

        // An older version of the program, which knows only "timeout", saves it.
        let older = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        older["timeout"] = 17
        try await older.flush()
        #expect(await nextChange(&changes) { $0.origin == .migration } != nil)
        #expect(settings.timeout == 17)
        try await store.flush()
        let onDisk = try PlistValue(contentsOf: dir.file())
        #expect(onDisk["Network"]?["timeout"] == 17)
        #expect(onDisk["timeout"] == nil)
    }
}
