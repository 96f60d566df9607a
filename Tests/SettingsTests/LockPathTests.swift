import Foundation
import Settings
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// The store locks the file `PlistFile.lockPath(for:)` names (the `settings` tool's test,
/// `FileSafetyCLITests`, shows the tool does too): one lock for the library and the tool.
struct LockPathTests {
    @Test(.timeLimit(hangLimit)) func theStoreTakesTheLockAtPlistFilesLockPathThroughLinks() async throws {
        let dir = try TemporaryDirectory()
        let dotfiles = dir.url.appending(path: "dotfiles")
        try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
        let real = dotfiles.appending(path: "app.plist").path
        try PlistValue.dictionary(["kept": true]).write(to: URL(filePath: real))
        #expect(symlink(real, dir.file().path) == 0)
        let lock = try #require(try PlistFile.tryLock(PlistFile.lockPath(for: real)))
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(lockTimeout: .milliseconds(100)))
        store["new"] = 1
        do {
            try await store.flush()
            Issue.record("saved while the lock was held")
        } catch {
            #expect(error.code == .fileLocked && error.description.contains(PlistFile.lockPath(for: real)))
        }
        lock.release()
        try await store.flush()
        #expect(try PlistValue(contentsOf: URL(filePath: real)) == ["kept": true, "new": 1])
    }
}
