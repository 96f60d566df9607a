import Foundation
import Settings
import SettingsTestSupport
import Testing

/// The samples of Docs/Persistence.md, run.
@Suite("Guide: Persistence")
struct PersistenceGuideTests {
    @Test func persistenceQuickExample() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url)
        store["volume"] = 0.8
        try await store.flush()
        #expect(try PlistValue(contentsOf: url)["volume"] == 0.8)
        #expect(store.loadError == nil)
        #expect(store.persistenceStatus.fileWrites == 1)
    }
}
