import Dispatch
import Foundation
@testable import Settings
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// Holds the advisory lock of a settings file the way another process would (`flock` locks
/// belong to an open file description, so a second descriptor in this process conflicts too).
final class ForeignLock {
    let fd: Int32
    init(for settingsFile: URL) throws {
        let lockPath = settingsFile.deletingLastPathComponent().appending(path: "." + settingsFile.lastPathComponent + ".lock").path
        fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
    func release() { close(fd) }
}

/// Collects one store's diagnostics through its own handler.
final class StoreDiagnostics: Sendable {
    private let all = Mutex<[SettingsDiagnostic]>([])
    let stream: AsyncStream<SettingsDiagnostic>
    private let continuation: AsyncStream<SettingsDiagnostic>.Continuation

    init(_ store: SettingsStore) {
        (stream, continuation) = AsyncStream.makeStream(of: SettingsDiagnostic.self)
        store.diagnosticsHandler = { [self] d in
            all.locked { $0.append(d) }
            continuation.yield(d)
        }
    }

    var messages: [String] { all.locked { $0.map(\.message) } }
}

/// Waits for the first status update that satisfies `condition`.
func nextStatus(
    _ iterator: inout AsyncStream<SettingsStore.PersistenceStatus>.Iterator,
    where condition: (SettingsStore.PersistenceStatus) -> Bool
) async -> SettingsStore.PersistenceStatus? {
    while let status = await iterator.next() {
        if condition(status) { return status }
    }
    return nil
}

/// The regression tests of the store's promises (issue "The store keeps every promise").
@Suite("Store promises")
struct StorePromisesTests {
    // 1. A store freed before its autosave still saves.

    @Test func aStoreDroppedWithUnsavedChangesIsKeptAliveUntilTheyAreSaved() async throws {
        let dir = try TemporaryDirectory()
        weak var weakStore: SettingsStore?
        func writeAndForget(_ i: Int, autosave: Duration?) {
            let store = SettingsStore.file(dir.file(), autosaveDelay: autosave, externalChanges: .ignored)
            store[SettingsKey("k\(i)")] = .integer(PlistInteger(Int64(i)))
            if i == 0 { weakStore = store }
        }
        for i in 0..<50 { writeAndForget(i, autosave: i.isMultiple(of: 2) ? .seconds(60) : nil) }
        #expect(weakStore != nil)  // still alive: it has unsaved changes
        do {
            try await SettingsStore.flushAll()
        } catch {
            // flushAll covers every store of the process: other tests' stores may fail on purpose.
            #expect(!error.description.contains(dir.url.path), "\(error)")
        }
        let saved = try #require(try PlistValue(contentsOf: dir.file()).dictionaryValue)
        #expect(saved.count == 50)
        #expect(saved["k49"] == 49)
    }

    @Test func aProcessThatDropsItsStoresAndExitsLosesNothing() throws {
        let dir = try TemporaryDirectory()
        let result = try Fault.run(["forget-and-exit", dir.file().path, "50"])
        #expect(result.status == 0, "\(result.stderr)")
        let saved = try #require(try PlistValue(contentsOf: dir.file()).dictionaryValue)
        #expect(saved.count == 50)
    }

    // 2. A diagnostics handler may use the store.

    @Test(.timeLimit(hangLimit)) func aDiagnosticsHandlerThatUsesTheStoreDoesNotDeadlockOrCrash() async throws {
        let dir = try TemporaryDirectory()
        try Data("<plist><dict><key>a</key><integr>1</integr></dict></plist>".utf8).write(to: dir.file())
        // No watcher: the reload below is the watcher's code path, called once, so the count of
        // reports is exact (a watcher could also see the file half-written and report it again).
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(settleDelay: .milliseconds(1)))
        let seen = Mutex<[Int]>([])
        store.diagnosticsHandler = { [store] _ in
            let writes = store.persistenceStatus.fileWrites   // reads the store
            store["fromHandler"] = .integer(PlistInteger(Int64(writes)))  // and writes it
            _ = store.loadError
            seen.locked { $0.append(writes) }
        }
        #expect(store["a"] == nil)                     // loads: malformed, reported to the handler
        #expect(seen.locked { $0.count } == 1)
        store["b"] = 1
        try await store.flush()                          // moved aside: reported again
        #expect(seen.locked { $0.count } == 2)
        // A reload of a malformed file, reported from the watcher's path.
        try Data("garbage".utf8).write(to: dir.file())
        await store.reloadIfChanged()
        #expect(seen.locked { $0.count } == 3)
        try await store.flush()
        #expect(try PlistValue(contentsOf: dir.file()).dictionaryValue?["fromHandler"] != nil)
    }

    @Test func eachStoreCanHaveItsOwnDiagnosticsHandler() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        try Data("not a plist".utf8).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let mine = StoreDiagnostics(store)
        _ = store["x"]
        #expect(mine.messages.count == 1)
        #expect(mine.messages.first?.contains(dir.file().path) == true)
        #expect(DiagnosticsRecorder.diagnostics(containing: dir.file().path).isEmpty)  // not the global one
    }

    // 3. Another process holding the lock stalls nothing.

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

    @Test func persistenceRunsOnTheStoresOwnThread() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let onExecutor = Mutex<[Bool]>([])
        store.diagnosticsHandler = { _ in onExecutor.locked { $0.append(store.executor.isCurrent) } }
        try Data("garbage".utf8).write(to: dir.file())
        _ = store["a"]                                     // the load runs on the executor and reports there
        store["b"] = 1
        try await store.flush()
        #expect(onExecutor.locked { $0 } == [true, true])
        #expect(!store.executor.isCurrent)
    }

    // 4. A FIFO, a device or a directory in place of the file.

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

    @Test(.timeLimit(hangLimit)) func aLinkToADeviceIsNeverOpened() async throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: dir.file().path, withDestinationPath: "/dev/zero")
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store["a"] == nil)
        #expect(store.loadError?.description.contains("character device") == true)
    }

    // 5. Change tracking is linear.

    @Test(.timeLimit(hangLimit)) func manyDistinctChangedKeysAreTrackedInLinearTime() async throws {
        // Quadratic tracking took 158 s for 40,000 keys: 10x the keys must cost about 10x, not 100x.
        // (The tracking is done by the writes, on the writing thread.)
        let dir = try TemporaryDirectory()
        var stores: [SettingsStore] = []
        let ratio = growth(from: 4_000, to: 40_000) { count in
            let store = SettingsStore.file(dir.file("\(stores.count).plist"), autosaveDelay: nil, externalChanges: .ignored)
            stores.append(store)
            for i in 0..<count { store[SettingsKey("key\(i)")] = .integer(PlistInteger(Int64(i))) }
        }
        #expect(isLinear(ratio, from: 4_000, to: 40_000), "10x the keys cost \(ratio)x the time")
        let last = try #require(stores.last)
        try await last.flush()
        #expect(try PlistValue(contentsOf: dir.file("\(stores.count - 1).plist")).dictionaryValue?.count == 40_000)
        for store in stores.dropLast() { try await store.flush() }
        // Repeated keys are still compacted.
        var state = SettingsStore.State()
        state.tracksChanges = true
        for i in 0..<100_000 { _ = state.markDirty(SettingsKey("k\(i % 10)")) }
        #expect(state.dirty.count < 4096)
    }

    // 6. Huge and sparse files.

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

    // 7. The lock file never follows links.

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

    // 8. Observers registered during a write.

    @Test func anObserverRegisteredDuringAWriteNeverMissesIt() throws {
        let store = SettingsStore.inMemory()
        var missed = 0
        for i in 0..<3000 {
            let key = SettingsKey("race\(i)")
            let olds = Mutex<[PlistValue?]>([])
            let observation = Mutex<SettingsObservation?>(nil)
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    store[key] = 1
                } else {
                    let o = store.onChange(of: key) { _, old in olds.locked { $0.append(old) } }
                    observation.locked { $0 = o }
                }
            }
            store[key] = 2  // after both: the observer must know the value was 1
            if olds.locked({ $0.last }) != .some(1) { missed += 1 }
            observation.locked { $0?.cancel() }
        }
        #expect(missed == 0)
    }

    // 9. The watch comes back after the directory is re-created.

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

    // 10. A failed autosave is retried.

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

    // 11. Quarantine only what stays malformed; keep a few.

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
        await store.reloadIfChanged()
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

    // 12. Links, special bits, owners, empty variables, files that get fixed.

    @Test func aSymlinkedSettingsFileIsSavedThroughToItsTarget() async throws {
        let dir = try TemporaryDirectory()
        let dotfiles = dir.url.appending(path: "dotfiles")
        try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
        let target = dotfiles.appending(path: "app.plist")
        try PlistValue.dictionary(["kept": true]).write(to: target)
        try FileManager.default.createSymbolicLink(atPath: dir.file().path, withDestinationPath: target.path)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store["kept"] == true)
        store["new"] = 1
        try await store.flush()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file().path) == target.path)
        #expect(try PlistValue(contentsOf: target) == ["kept": true, "new": 1])
        #expect(FileManager.default.fileExists(atPath: dotfiles.appending(path: ".app.plist.lock").path))
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

    @Test func emptyXDGAndHomeCountAsUnset() {
        let url = SettingsStore.defaultFileURL(application: "App", environment: ["XDG_CONFIG_HOME": "", "HOME": "/home/ada"])
        #expect(url.path == "/home/ada/.config/App/settings.plist")
        let fallback = SettingsStore.defaultFileURL(application: "App", environment: ["XDG_CONFIG_HOME": "", "HOME": ""])
        #expect(fallback.path.hasSuffix("/.config/App/settings.plist") && fallback.path.hasPrefix("/"))
        #expect(!fallback.path.hasPrefix("/.config"))
    }

    // Lazy by default.

    @Test func creatingAFileStoreDoesNoIO() throws {
        let dir = try TemporaryDirectory()
        try Data("garbage".utf8).write(to: dir.file())
        let store = SettingsStore.file(dir.file())
        let diagnostics = StoreDiagnostics(store)
        let loadedBefore = store.loaded.load(ordering: .acquiring)
        #expect(!loadedBefore)
        #expect(diagnostics.messages.isEmpty)
        _ = store["a"]
        let loadedAfter = store.loaded.load(ordering: .acquiring)
        #expect(loadedAfter)
        #expect(diagnostics.messages.count == 1)
    }

    @Test func aSettingBoundToAnotherStoreNeverTouchesItsDeclaredStore() throws {
        let dir = try TemporaryDirectory()
        let declared = SettingsStore.file(dir.file())
        struct Group {
            @Setting var probe: Int
            init(store: SettingsStore) { _probe = Setting("lazyProbe", default: 1, store: store) }
        }
        let group = Group(store: declared)
        SettingsStore.bind(group, to: SettingsStore.inMemory())
        group.probe = 2
        #expect(group.probe == 2)
        let loaded = declared.loaded.load(ordering: .acquiring)
        #expect(!loaded)
        #expect(!FileManager.default.fileExists(atPath: dir.file().path))
    }

    // Issue "Values and model files that never lose data", item 2: a string XML cannot carry.

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
        let python = Process()
        python.executableURL = URL(filePath: "/usr/bin/env")
        python.arguments = ["python3", "-c", "import plistlib,sys; d=plistlib.load(open(sys.argv[1],'rb')); sys.exit(0 if d['title']=='\\x1b]0;title\\x07' and d['later']==2 else 3)", dir.file().path]
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
    }
}

/// Runs the built `settings-fault` helper as a subprocess.
enum Fault {
    static var executable: URL {
        var dir = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        while dir.path.contains(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appending(path: "settings-fault")
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        try process.run()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errData, as: UTF8.self))
    }
}
