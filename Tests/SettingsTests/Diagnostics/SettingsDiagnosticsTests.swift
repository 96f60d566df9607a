import Dispatch
import Foundation
@testable import Settings
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Diagnostics handlers: the process-wide one and each store's own.
@Suite("SettingsDiagnostics")
struct SettingsDiagnosticsTests {
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
        try #require(store.backend).reloadOnThread(store)  // on the store's thread, as the watcher does
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
}
