import Foundation
import Logging
import ServiceLifecycle
import Settings
import SettingsConfiguration
import Testing

/// Serialized: the service saves every store in the process, and the second test leaves one that
/// cannot be saved until it repairs it.
@Suite(.serialized)
struct SettingsStoreServiceTests {
    @Test(.timeLimit(.minutes(1)))
    func gracefulShutdownSavesAStoresPendingChanges() async throws {
        let dir = try TempDir()
        let store = dir.store()                     // no autosave: only a flush writes the file
        store["log/level"] = "debug"
        #expect(store.persistenceStatus.hasUnsavedChanges)
        let group = ServiceGroup(
            services: [SettingsStoreService(timeout: .seconds(10))],
            logger: Logger(label: "test"))
        async let running: Void = group.run()
        await group.triggerGracefulShutdown()
        try await running
        #expect(!store.persistenceStatus.hasUnsavedChanges)
        #expect(dir.store()["log/level"] == "debug", "a fresh store reads the saved value from the file")
    }

    @Test(.timeLimit(.minutes(1)))
    func aSaveThatCannotFinishIsBoundedAndReported() async throws {
        let dir = try TempDir()
        let blocker = dir.url.appending(path: "not-a-directory")
        try Data("x".utf8).write(to: blocker)
        let store = SettingsStore.file(blocker.appending(path: "settings.plist"), autosaveDelay: nil)
        store["a"] = 1
        let service = SettingsStoreService(timeout: .seconds(5))
        let error = await #expect(throws: SettingsError.self) { try await service.flush() }
        #expect(error?.description.contains("not-a-directory") == true)
        // Repaired, so that the store saves and leaves the process's pending saves.
        try FileManager.default.removeItem(at: blocker)
        try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: true)
        try await service.flush()
        #expect(!store.persistenceStatus.hasUnsavedChanges)
    }
}
