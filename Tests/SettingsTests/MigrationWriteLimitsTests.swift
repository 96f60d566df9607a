import Foundation
import SettingsPlist
import Testing
@testable import Settings
import SettingsTestSupport

/// A migration is one more way values reach the user layer: one that leaves values nested
/// deeper than readers accept is refused whole, as a too-deep write is, instead of being stored
/// and making every later save of the file fail.
@Suite("Migrations are held to the write limits")
struct MigrationWriteLimitsTests {
    private func nested(_ levels: Int) -> PlistValue {
        var value = PlistValue.string("leaf")
        for _ in 0..<levels { value = .array([value]) }
        return value
    }

    @Test func aMigrationThatNestsTooDeepIsRefusedAndLaterSavesStillWork() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil)
        store["keep"] = "me"
        try await store.flush()
        let deep = nested(600)
        let migrations = SettingsMigrations { m in
            m.step(toVersion: 1) { dictionary in dictionary["deep"] = deep }
        }
        // Before: migrated, and then every flush failed ("nested deeper than 512") forever.
        #expect(throws: SettingsError.self) { try store.migrate(with: migrations) }
        #expect(store[SettingsKey("deep")] == nil)
        #expect(store[SettingsKey(SettingsMigrations.versionKey)] == nil)  // nothing was changed
        store["after"] = 1
        try await store.flush()
        let next = SettingsStore.file(url, autosaveDelay: nil)
        #expect(next.loadError == nil)
        #expect(next["keep"] == "me")
        #expect(next["after"] == 1)
    }

    @Test func aMigrationAtTheDeepestLevelReadersAcceptIsKept() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil)
        let deepest = nested(PlistNesting.maximumDepth - 1)  // the file's dictionary and 511 arrays
        let migrations = SettingsMigrations { m in
            m.step(toVersion: 1) { dictionary in dictionary["deep"] = deepest }
        }
        #expect(try store.migrate(with: migrations) == 0)
        try await store.flush()
        let next = SettingsStore.file(url, autosaveDelay: nil)
        #expect(next.loadError == nil)
        #expect(next[SettingsKey("deep")] == deepest)
    }
}
