import Foundation
@testable import Settings
import SettingsTestSupport
import Testing

@Suite("In-memory stores carry no file machinery")
struct InMemoryStoreTests {
    @Test func anInMemoryStoreHasNoFileBackendAndSharesOneIdleExecutor() async throws {
        let first = SettingsStore.inMemory(["volume": 0.5])
        let second = SettingsStore.inMemory()
        #expect(first.backend == nil && second.backend == nil)
        #expect(first.executor === second.executor)
        #expect(first.executor === SettingsStore.inMemoryExecutor)

        // Everything a file store offers still answers, as it did.
        first["volume"] = 0.8
        try await first.flush()
        try first.flushNow()
        #expect(first["volume"] == 0.8)
        #expect(first.format == .xml)
        #expect(first.loadError == nil)
        let status = first.persistenceStatus
        #expect(status.fileWrites == 0 && !status.hasUnsavedChanges && status.lastSaveError == nil)
    }

    @Test func aFileStoreHasItsOwnBackendAndExecutor() throws {
        let directory = try TemporaryDirectory()
        let first = SettingsStore.file(directory.file("a.plist"), format: .binary)
        let second = SettingsStore.file(directory.file("b.plist"))
        let firstBackend = try #require(first.backend)
        let secondBackend = try #require(second.backend)
        #expect(firstBackend !== secondBackend)
        #expect(first.executor === firstBackend.executor && second.executor === secondBackend.executor)
        #expect(first.executor !== SettingsStore.inMemoryExecutor)
        #expect(first.format == .binary)
    }
}
