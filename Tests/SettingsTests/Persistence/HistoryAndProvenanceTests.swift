import SettingsFiles
import Foundation
@testable import Settings
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Provenance (who set each key), the file's history of generations, and restoring from it.
@Suite("History and provenance")
struct HistoryAndProvenanceTests {
    /// The built `settings` tool, beside the `settings-fault` helper.
    static var tool: URL { Fault.executable.deletingLastPathComponent().appending(path: "settings") }

    /// Runs the tool and returns its exit status and standard error.
    static func runTool(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let run = try await offThePool { Result { try runProgram(tool, arguments) } }.get()
        return (run.status, run.output)
    }

    @Test func provenanceNamesEachWriterAcrossTwoProcessesAndAHandEdit() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        // Another process using the library writes child-0 and child-1.
        let child = try await Fault.finished(["writer", url.path, "child", "2"])
        #expect(!child.hung)
        #expect(child.status == 0)
        let childPID = Int(child.processIdentifier)
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        store["mine"] = 1
        #expect(store.provenance(of: "mine")?.pid == Int(getpid()))  // not saved yet: this process
        try await store.flush()
        let fromChild = try #require(store.provenance(of: "child-0"))
        #expect(fromChild.origin == .write)
        #expect(fromChild.process == "settings-fault")
        #expect(fromChild.pid == childPID)
        let mine = try #require(store.provenance(of: "mine"))
        #expect(mine.origin == .write)
        #expect(mine.pid == Int(getpid()))
        #expect(store.provenance(of: "missing") == nil)

        // A hand edit while no store watches.
        var edited = try #require(try PlistValue(contentsOf: url).dictionaryValue)
        edited["child-1"] = "by hand"
        try PlistValue.dictionary(edited).encoded(as: .xml).write(to: url)
        let later = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        #expect(later.provenance(of: "child-1")?.origin == .changedOnDisk)
        #expect(later.provenance(of: "child-1")?.summary.hasPrefix("changed on disk") == true)
        #expect(later.provenance(of: "child-0")?.pid == childPID)
        #expect(later.provenance(of: "mine")?.pid == Int(getpid()))  // survives a new store

        // The next save records the hand edit durably and keeps the hand-edited file as a generation.
        later["other"] = true
        try await later.flush()
        let log = try SettingsProvenanceLog.load(for: url.path)
        #expect(log.entries[["child-1"]]?.origin == .changedOnDisk)
        #expect(log.entries[["other"]]?.pid == Int(getpid()))
        #expect(log.entries[["child-0"]]?.pid == childPID)
        let history = try await later.history()
        let handEdit = try #require(history.first { $0.writer.origin == .changedOnDisk })
        #expect(handEdit.changed == ["child-1"])
        #expect(try handEdit.contents()["other"] == nil)
        #expect(history.last?.changed == ["other"])
        // The settings file itself stays a plain plist with only the settings.
        let keys = try #require(try PlistValue(contentsOf: url).dictionaryValue).keys
        #expect(Set(keys) == ["child-0", "child-1", "mine", "other"])
    }

    @Test func namespacesRecordTheirLeavesAndRemovedKeysLoseTheirEntries() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        store["Network/timeout"] = 30
        store["Network/proxy"] = "p"
        try await store.flush()
        #expect(store.provenance(of: "Network")?.pid == Int(getpid()))
        store["Network/proxy"] = nil
        try await store.flush()
        let log = try SettingsProvenanceLog.load(for: url.path)
        #expect(log.entries.keys.sorted { $0.lexicographicallyPrecedes($1) } == [["Network", "timeout"]])
    }

    @Test func migrationsAndSyncRecordTheirOrigin() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        store["timeout"] = 30
        store["untouched"] = 1
        try await store.flush()
        try store.migrate(with: SettingsMigrations { m in m.renameKey("timeout", to: "Network/timeout", inVersion: 1) })
        _ = store.applyToUserLayer([(key: "synced", value: "from elsewhere")], origin: .sync)
        try await store.flush()
        #expect(store.provenance(of: "Network/timeout")?.origin == .migration)
        #expect(store.provenance(of: "synced")?.origin == .sync)
        #expect(store.provenance(of: "untouched")?.origin == .write)
        #expect(store.provenance(of: "timeout") == nil)
    }

    @Test func aSyncedValueNamesTheDeviceItCameFrom() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        _ = store.applyToUserLayer([(key: "a", value: 1), (key: "b", value: 2), (key: "c", value: 3)], origin: .sync,
                                   devices: ["a": "3F2A-DEVICE", "b": "77B0-DEVICE"])
        try await store.flush()
        #expect(store.provenance(of: "a")?.device == "3F2A-DEVICE")
        #expect(store.provenance(of: "b")?.device == "77B0-DEVICE")
        #expect(store.provenance(of: "c")?.device == nil)
        #expect(store.provenance(of: "c")?.origin == .sync)
        #expect(store.provenance(of: "a")?.summary.contains("3F2A-DEVICE") == true)
        // After a restart, from the log on disk.
        let again = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        #expect(again.provenance(of: "b")?.device == "77B0-DEVICE")
    }

    /// A generation lists each key its save wrote once, however often it was written before
    /// the save, as ``SettingsKey``s that print as paths, like ``SettingsChange/keys`` (issue 31,
    /// item 8: `t, t, p, p` and `[[String]]` before).
    @Test func aGenerationListsEachKeyOnceAsSettingsKeys() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        store["Network/timeout"] = 1
        store["Network/timeout"] = 2
        store["proxy"] = "a"
        store["proxy"] = "b"
        try await store.flush()
        let generation = try #require(try await store.history().last)
        let keys: [SettingsKey] = generation.changed
        #expect(keys == ["Network/timeout", "proxy"])
        #expect("\(generation.changed)" == "[Network/timeout, proxy]")
        #expect(try generation.contents()["proxy"] == "b")
        #expect(SettingsGeneration(try #require(try PlistHistory.list(for: dir.file().path).last)) == generation)
    }

    @Test func historyIsBoundedAndARestoreIsItselfAGenerationThatCanBeUndone() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(historyLimit: 3))
        for i in 1...5 {
            store["volume"] = .integer(PlistInteger(Int64(i)))
            try await store.flush()
        }
        var history = try await store.history()
        #expect(history.map(\.number) == [3, 4, 5])
        #expect(history.allSatisfy { $0.changed == ["volume"] && $0.writer.pid == Int(getpid()) })
        #expect(try history[0].contents()["volume"] == 3)

        try await store.restore(3)
        #expect(store["volume"] == 3)
        #expect(try PlistValue(contentsOf: url)["volume"] == 3)
        #expect(store.provenance(of: "volume")?.origin == .restore)
        history = try await store.history()
        #expect(history.map(\.number) == [4, 5, 6])
        #expect(history.last?.writer.origin == .restore)

        try await store.restore(5)  // undo the restore
        #expect(store["volume"] == 5)
        #expect(try PlistValue(contentsOf: url)["volume"] == 5)
        await #expect(throws: SettingsError.self) { try await store.restore(1) }  // no longer kept

        let meta = PlistFile.companionDirectory(for: url.path)
        #expect(try dir.permissions(of: URL(filePath: meta + "/" + PlistHistory.journalName)) == 0o600)
        #expect(try dir.permissions(of: URL(filePath: meta + "/provenance.plist")) == 0o600)
    }

    @Test func restoringSomeKeysLeavesTheOthers() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        store["a"] = 1
        store["b"] = 1
        try await store.flush()
        store["a"] = 2
        store["b"] = 2
        store["c"] = 2
        try await store.flush()
        let first = try #require(try await store.history().first).number
        try await store.restore(first, keys: ["a", "c"])
        #expect(store["a"] == 1)
        #expect(store["b"] == 2)
        #expect(store["c"] == nil)  // not in that generation: removed
    }

    @Test func theToolsRestoreIsSeenLiveByARunningStore() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil)
        store["theme"] = "light"
        try await store.flush()
        store["theme"] = "dark"
        try await store.flush()
        let first = try #require(try await store.history().first)
        #expect(try first.contents()["theme"] == "light")
        var changes = store.changes(bufferingNewest: 16).makeAsyncIterator()
        let restored = try await Self.runTool(["restore", url.path, String(first.number)])
        #expect(restored.status == 0, "\(restored.output)")
        let change = await nextChange(&changes) { $0.keys.contains("theme") }
        #expect(change?.origin == .externalFile)
        #expect(store["theme"] == "light")
        #expect(store.provenance(of: "theme")?.origin == .restore)
        let listed = try await Self.runTool(["history", url.path])
        #expect(listed.output.split(separator: "\n").last?.contains("restored from history by settings pid") == true, "\(listed.output)")
    }

    @Test func theToolsWriteIsRecordedAndResetKeepsAGeneration() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        store["kept"] = 1
        try await store.flush()
        #expect(try await Self.runTool(["write", url.path, "volume", "7"]).status == 0)
        #expect(try SettingsProvenanceLog.describe(key: ["volume"], inFileAt: url.path)?.hasPrefix("set with the settings tool (pid ") == true)
        #expect(try SettingsProvenanceLog.describe(key: ["kept"], inFileAt: url.path)?.hasPrefix("set by ") == true)
        #expect(try await Self.runTool(["reset", url.path]).status == 0)
        #expect(try PlistValue(contentsOf: url) == .dictionary([:]))
        let history = try PlistHistory.list(for: url.path)
        let beforeReset = try #require(history.dropLast().last)
        #expect(try beforeReset.contents() == ["kept": 1, "volume": 7])
        #expect(history.last?.writer.origin == .tool)
        #expect(try await Self.runTool(["restore", url.path, String(beforeReset.number), "volume"]).status == 0)
        #expect(try PlistValue(contentsOf: url) == .dictionary(["volume": 7]))
    }

    @Test func killedWhileSavingLeavesTheFileAndItsHistoryReadable() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        for _ in 0..<3 {
            let (printed, end) = try await Fault.signalled(["crash-writer", url.path], with: SIGKILL, after: 40)
            #expect(printed.count == 40)
            let acknowledged = (printed + end.lines).compactMap { Int($0) }.last ?? 0
            let saved = try #require(try PlistValue(contentsOf: url)["counter"]?.intValue)
            #expect(saved >= acknowledged)
            let history = try PlistHistory.list(for: url.path)
            #expect(!history.isEmpty)
            #expect(history.count <= 20)
            for generation in history { _ = try generation.contents() }  // every kept generation parses
        }
    }

    @Test func theProgramsHistoryLimitsAreRecordedForTheToolAndALimitOfZeroRemovesWhatWasKept() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        // Kept by an earlier version of the program, with the default limits.
        let before = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        for i in 0..<4 {
            before["k"] = .integer(PlistInteger(Int64(i)))
            try await before.flush()
        }
        #expect(try PlistHistory.list(for: url.path).count == 4)
        #expect(try PlistLayersManifest.read(beside: url.path) == nil)  // nothing to say: no manifest

        let many = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored,
                                      options: PersistenceOptions(historyLimit: 100, historyByteBudget: 1 << 30))
        many["k"] = 10
        try await many.flush()
        let manifest = try #require(try PlistLayersManifest.read(beside: url.path))
        #expect(manifest.historyLimit == 100)
        #expect(manifest.historyByteBudget == 1 << 30)
        for i in 0..<22 { #expect(try await Self.runTool(["write", url.path, "t", String(i)]).status == 0) }
        #expect(try PlistHistory.list(for: url.path).count == 27)  // the tool keeps the program's 100, not its default 20

        let none = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored, options: PersistenceOptions(historyLimit: 0))
        none["k"] = 11
        try await none.flush()
        #expect(try PlistLayersManifest.read(beside: url.path)?.historyLimit == 0)
        #expect(try PlistHistory.list(for: url.path).isEmpty)
        #expect(try await Self.runTool(["write", url.path, "apiToken", "secret"]).status == 0)
        #expect(try PlistHistory.list(for: url.path).isEmpty)
    }

    @Test func theToolsReplaceBesideALibraryWriterLosesNoAcknowledgedKey() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        try PlistValue.dictionary(["seed": 0]).write(to: url)
        try FileManager.default.createDirectory(at: dir.file(".settings.plist.meta"), withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])  // a file the library manages
        // Another process's store writes and flushes 150 keys, one save each, while the tool
        // replaces 40 keys of its own in the same file.
        async let child = Fault.finished(["writer", url.path, "lib", "150"])
        var failed: [Int] = []
        for i in 0..<40 where try await Self.runTool(["replace", "tool-\(i)", "-integer", String(i), url.path]).status != 0 {
            failed.append(i)
        }
        let end = try await child
        #expect(!end.hung)
        #expect(end.status == 0)
        #expect(failed.isEmpty)
        let contents = try #require(try PlistValue(contentsOf: url).dictionaryValue)
        let lost = (0..<150).map { "lib-\($0)" }.filter { contents[$0] == nil } + (0..<40).map { "tool-\($0)" }.filter { contents[$0] == nil }
        #expect(lost.isEmpty, "lost \(lost.count) acknowledged keys: \(lost.prefix(20))")
    }
}
