import Foundation
import Logging
import ServiceLifecycle
import Settings
import SettingsConfiguration
import Testing

struct SettingsStoreServiceTests {
    @Test(.timeLimit(.minutes(1)))
    func gracefulShutdownSavesAStoresPendingChanges() async throws {
        let dir = try TempDir()
        let store = dir.store()                     // no autosave: only a flush writes the file
        store["log/level"] = "debug"
        #expect(store.persistenceStatus.hasUnsavedChanges)
        let group = ServiceGroup(
            services: [SettingsStoreService(stores: [store], timeout: .seconds(10))],
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
        let service = SettingsStoreService(stores: [store], timeout: .seconds(5))
        let error = await #expect(throws: SettingsError.self) { try await service.flush() }
        #expect(error?.path?.contains("not-a-directory") == true)
    }
}
