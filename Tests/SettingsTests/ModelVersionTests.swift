import Foundation
import Settings
import Testing
import SettingsTestSupport

/// Odd `$version`s: never lowered, never migrated twice, unknown keys kept when a migration fails.
@Suite("Models: versions")
struct ModelVersionTests {
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
