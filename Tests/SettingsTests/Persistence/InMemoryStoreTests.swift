import Foundation
@testable import Settings
import SettingsTestSupport
import Testing

@Suite("In-memory stores carry no file machinery")
struct InMemoryStoreTests {
    @Test func anInMemoryStoreHasNoFileBackendAndNoExecutor() async throws {
        let first = SettingsStore.inMemory(["volume": 0.5])
        let second = SettingsStore.inMemory()
        // The persistence thread and its executor belong to the file backend: a store without
        // one is a plain actor, with nothing to start, stop or share.
        #expect(first.backend == nil && second.backend == nil)

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
        #expect(firstBackend.executor !== secondBackend.executor)
        #expect(first.format == .binary)
    }
}
