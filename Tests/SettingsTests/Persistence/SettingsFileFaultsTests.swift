import Dispatch
import Foundation
@testable import Settings
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Broken, hostile and vanishing settings files: refused without hanging, retried, quarantined sparingly.
@Suite("SettingsFile: faults")
struct SettingsFileFaultsTests {
    @Test(.timeLimit(hangLimit)) func aFIFOInPlaceOfTheFileIsRefusedWithoutHanging() async throws {
        let dir = try TemporaryDirectory()
        #expect(mkfifo(dir.file().path, 0o600) == 0)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store["a"] == nil)
        let error = try #require(store.loadError)
        #expect(error.description.contains("FIFO"))
        #expect(error.description.contains(dir.file().path))
        store["a"] = 1
        await #expect(throws: SettingsError.self) { try await store.flush() }
        var s = stat()
        #expect(lstat(dir.file().path, &s) == 0 && (s.st_mode & S_IFMT) == S_IFIFO)  // left as it was
    }

    @Test(.timeLimit(hangLimit)) func externalChangesAreSeenAfterTheDirectoryIsRecreated() async throws {
        let dir = try TemporaryDirectory()
        let folder = dir.url.appending(path: "App")
        let file = folder.appending(path: "settings.plist")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = SettingsStore.file(file, autosaveDelay: nil)
        var changes = store.changes.makeAsyncIterator()
        try PlistValue.dictionary(["v": 1]).write(to: file)
        #expect(await nextChange(&changes) == SettingsChange(keys: ["v"], origin: .externalFile))
        try FileManager.default.removeItem(at: folder)
        #expect(await nextChange(&changes) == SettingsChange(keys: ["v"], origin: .externalFile))  // gone: v removed
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try PlistValue.dictionary(["v": 2]).write(to: file)
        #expect(await nextChange(&changes) == SettingsChange(keys: ["v"], origin: .externalFile))
        #expect(store["v"] == 2)
    }

    @Test(.timeLimit(hangLimit)) func aFailedAutosaveIsRetriedAndReportedOnce() async throws {
        let dir = try TemporaryDirectory()
        let blocker = dir.url.appending(path: "blocker")
        try Data().write(to: blocker)                                  // a file where the directory must go
        let store = SettingsStore.file(blocker.appending(path: "settings.plist"), autosaveDelay: .milliseconds(1))
        let diagnostics = StoreDiagnostics(store)
        var reports = diagnostics.stream.makeAsyncIterator()
        var updates = store.persistenceUpdates.makeAsyncIterator()
        store["a"] = 1
        let report = await reports.next()
        #expect(report?.message.contains("retrying") == true)
        _ = await nextStatus(&updates) { $0.lastSaveError != nil }
        _ = await nextStatus(&updates) { $0.lastSaveError != nil }   // failed again: a retry
        try FileManager.default.removeItem(at: blocker)               // "space freed"
        let saved = await nextStatus(&updates) { $0.fileWrites == 1 }
        #expect(saved?.lastSaveError == nil)
        #expect(try PlistValue(contentsOf: blocker.appending(path: "settings.plist")) == ["a": 1])
        #expect(diagnostics.messages.filter { $0.contains("retrying") }.count == 1)
    }

    @Test(.timeLimit(hangLimit)) func aFileFixedWhileSettlingIsMergedNotMovedAside() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(settleDelay: .seconds(1)))
        store["a"] = 1
        try await store.flush()
        try Data("<plist><dict><key>half".utf8).write(to: dir.file())  // an editor halfway through
        store["b"] = 2
        var updates = store.persistenceUpdates.makeAsyncIterator()
        let flush = Task { try await store.flush() }
        _ = await nextStatus(&updates) { $0.waitingForFileToSettle }
        try PlistValue.dictionary(["a": 1, "edited": true]).write(to: dir.file())  // the editor finished
        try #require(store.backend).reloadOnThread(store)  // on the store's thread, as the watcher does
        try await flush.value
        #expect(try PlistValue(contentsOf: dir.file()) == ["a": 1, "edited": true, "b": 2])
        #expect(store.persistenceStatus.movedAside == nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(!names.contains { $0.contains(".corrupt-") })
    }

    @Test(.timeLimit(hangLimit)) func atMostAFewQuarantineFilesAreKept() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(settleDelay: .milliseconds(1)))
        for i in 0..<8 {
            try Data("garbage \(i)".utf8).write(to: dir.file())
            store[SettingsKey("k\(i)")] = 1
            try await store.flush()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(names.filter { $0.hasPrefix("settings.plist.corrupt-") }.count == 3)
    }

    @Test func setIDBitsAreDroppedAndTheOwnerKept() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["a": 1]).write(to: dir.file())
        #expect(chmod(dir.file().path, 0o6640) == 0)
        let isRoot = geteuid() == 0
        if isRoot { #expect(chown(dir.file().path, 1234, 5678) == 0) }
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        store["b"] = 2
        try await store.flush()
        var s = stat()
        #expect(stat(dir.file().path, &s) == 0)
        #expect(s.st_mode & 0o7777 == 0o640)
        if isRoot { #expect(s.st_uid == 1234 && s.st_gid == 5678) }
    }

    @Test func aFileUnusableAtLoadIsSavedOnceItIsFixed() async throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.file(), withIntermediateDirectories: true)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        store["mine"] = 1
        await #expect(throws: SettingsError.self) { try await store.flush() }
        try FileManager.default.removeItem(at: dir.file())
        try PlistValue.dictionary(["theirs": 2]).write(to: dir.file())
        try await store.flush()
        #expect(try PlistValue(contentsOf: dir.file()) == ["theirs": 2, "mine": 1])
    }

    @Test func aStringXMLCannotCarryMakesTheFileBinaryNotUnsavable() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let diagnostics = StoreDiagnostics(store)
        store["title"] = .string("\u{1B}]0;title\u{07}")
        try await store.flush()
        store["later"] = 2
        try await store.flush()                               // later saves keep working
        let bytes = try Data(contentsOf: dir.file())
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        #expect(try PlistValue(contentsOf: dir.file()) == ["title": .string("\u{1B}]0;title\u{07}"), "later": 2])
        #expect(diagnostics.messages.filter { $0.contains("binary") }.count == 1)
        // An independent reader agrees (CPython's plistlib, when present).
        let python = try runProgram(URL(filePath: "/usr/bin/env"), ["python3", "-c", "import plistlib,sys; d=plistlib.load(open(sys.argv[1],'rb')); sys.exit(0 if d['title']=='\\x1b]0;title\\x07' and d['later']==2 else 3)", dir.file().path])
        #expect(python.status == 0, "\(python.stderr)")
    }
}
