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

/// The store locks the file `PlistFile.lockPath(for:)` names (the `settings` tool's test,
/// `FileSafetyCLITests`, shows the tool does too): one lock for the library and the tool.
struct SettingsFileLockTests {
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

    @Test(.timeLimit(hangLimit)) func aLockHeldElsewhereNeitherStallsTheProgramNorLosesTheChanges() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: .milliseconds(1),
                                       options: PersistenceOptions(lockTimeout: .milliseconds(300)))
        let diagnostics = StoreDiagnostics(store)
        let lock = try ForeignLock(for: dir.file())
        store["a"] = 1                                       // autosave starts and finds the lock busy
        store["k"] = 999
        // Reads, writes and the status never wait for the disk or the lock: on a store whose lock
        // wait is an hour, a write that waited would hang until the test's time limit.
        let patient = SettingsStore.file(dir.file("patient.plist"), autosaveDelay: .milliseconds(1),
                                         options: PersistenceOptions(lockTimeout: .seconds(3600)))
        let patientLock = try ForeignLock(for: dir.file("patient.plist"))
        for i in 0..<1000 { patient["k"] = .integer(PlistInteger(Int64(i))); _ = patient["k"] }
        #expect(patient["k"] == 999)
        _ = patient.persistenceStatus
        patientLock.release()
        try await patient.flush()
        #expect(try PlistValue(contentsOf: dir.file("patient.plist"))["k"] == 999)
        // flush() gives up after the lock timeout with a clear error (not waiting for the lock).
        await #expect(throws: SettingsError.self) { try await store.flush() }
        do { try await store.flush() } catch { #expect(error.code == .fileLocked && error.description.contains(".settings.plist.lock")) }
        // flushNow() is bounded too.
        #expect(throws: SettingsError.self) { try store.flushNow() }
        var updates = store.persistenceUpdates.makeAsyncIterator()
        lock.release()
        // The autosave's retry saves once the lock is free.
        _ = await nextStatus(&updates) { $0.fileWrites > 0 && !$0.hasUnsavedChanges }
        #expect(try PlistValue(contentsOf: dir.file()) == ["a": 1, "k": 999])
        #expect(diagnostics.messages.filter { $0.contains("held the lock") }.count <= 1)
    }

    /// Several processes saving one file take the lock in turn: the autosave may find it busy at
    /// every try while this store's own flushes get it. Its report that another process held the
    /// lock longer than the timeout counts from the store's last save, not from its first try.
    @Test func theAutosavesWaitForTheLockCountsFromTheStoresLastSave() async throws {
        let start = ContinuousClock.now
        let later = start.advanced(by: .seconds(1))
        #expect(SettingsStore.lockWaitStart(busySince: start, lastSave: nil) == start)
        #expect(SettingsStore.lockWaitStart(busySince: start, lastSave: later) == later)
        #expect(SettingsStore.lockWaitStart(busySince: later, lastSave: start) == later)

        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        let backend = try #require(store.backend)
        #expect(await backend.lastSave == nil)
        store["a"] = 1
        try await store.flush()
        let saved = try #require(await backend.lastSave)
        #expect(saved >= start)
        let lock = try ForeignLock(for: dir.file())
        store["a"] = 2
        #expect(throws: SettingsError.self) { try store.flushNow(waitingAtMost: .milliseconds(10)) }
        #expect(await backend.lastSave == saved)  // a save that found the lock busy is no save
        lock.release()
    }

    @Test func aLinkInPlaceOfTheLockFileIsRefused() async throws {
        let dir = try TemporaryDirectory()
        let victim = dir.file("victim")
        try FileManager.default.createSymbolicLink(atPath: dir.file(".settings.plist.lock").path, withDestinationPath: victim.path)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        store["a"] = 1
        await #expect(throws: SettingsError.self) { try await store.flush() }
        do { try await store.flush() } catch { #expect(error.description.contains("symbolic link")) }
        #expect(!FileManager.default.fileExists(atPath: victim.path))
    }
}
