import Foundation
import Settings
import Testing
import SettingsTestSupport

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
}
