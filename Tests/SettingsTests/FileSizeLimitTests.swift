import SettingsFiles
import Dispatch
import Foundation
@testable import Settings
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One size limit (`PlistFile.maximumSize`) for the store, model files and the `settings` tool
/// (its side: `FileSafetyCLITests.importRefusesAFileTheLibraryCouldNotLoad`).
struct FileSizeLimitTests {
    @Test func theStoresDefaultLimitIsPlistFilesLimit() {
        #expect(PersistenceOptions().maximumFileSize == PlistFile.maximumSize)
    }

    @Test func theStoreNeverWritesAFileItCouldNotLoadAgain() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["small": 1]).write(to: dir.file())
        let before = try Data(contentsOf: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(maximumFileSize: 1024))
        // Each value fits (a single value over the limit is refused at write time:
        // WriteLimitsTests); together they do not.
        for i in 0..<4 { store["big\(i)"] = .string(String(repeating: "x", count: 500)) }
        do {
            try await store.flush()
            Issue.record("saved a file larger than the limit")
        } catch {
            #expect(error.description.contains("larger than the limit of 1.0 KiB (1024 bytes)"))
        }
        #expect(try Data(contentsOf: dir.file()) == before)
        #expect(store["big3"]?.stringValue?.count == 500)  // kept in memory
    }

    @Test func aHugeSparseFileIsRefusedWithBothSizesAndLeftAlone() async throws {
        let dir = try TemporaryDirectory()
        let fd = open(dir.file().path, O_RDWR | O_CREAT, 0o600)
        #expect(ftruncate(fd, 60 << 30) == 0)  // 60 GiB, sparse
        close(fd)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store["a"] == nil)
        let error = try #require(store.loadError)
        #expect(error.description.contains(dir.file().path))
        #expect(error.description.contains("60.0 GiB") && error.description.contains("64.0 MiB"))
        store["a"] = 1
        await #expect(throws: SettingsError.self) { try await store.flush() }
        #expect(try FileManager.default.attributesOfItem(atPath: dir.file().path)[.size] as? Int == 60 << 30)
    }

    @Test func theSizeLimitIsConfigurable() throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["big": .string(String(repeating: "x", count: 4000))]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, options: PersistenceOptions(maximumFileSize: 1024))
        #expect(store["big"] == nil)
        #expect(store.loadError?.description.contains("1.0 KiB (1024 bytes)") == true)
    }
}
