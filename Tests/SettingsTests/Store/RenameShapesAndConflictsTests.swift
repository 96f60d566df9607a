#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import Settings
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Synchronization
import Testing

/// Renames whatever the shapes of the old and new key paths, renames that conflict, and values
/// other programs write under an old name after the move (issue 28, items 1-3).
struct RenameShapesAndConflictsTests {
    private func collecting(_ store: SettingsStore) -> Diagnostics {
        let diagnostics = Diagnostics()
        store.diagnosticsHandler = { d in diagnostics.all.withLock { $0.append(d) } }
        return diagnostics
    }

    final class Diagnostics: Sendable {
        let all = Mutex<[SettingsDiagnostic]>([])
        var conflicts: [String] { all.withLock { $0.filter { $0.kind == .renameConflict }.map(\.message) } }
    }

    @Test func aKeyThatBecomesANamespaceKeepsItsValue() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["proxy": "h:8080", "other": 1]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        store.registerRename(of: "proxy/host", formerly: ["proxy"])
        #expect(store["proxy/host"] == "h:8080")
        try await store.flush()
        let onDisk = try PlistValue(contentsOf: dir.file())
        #expect(onDisk["proxy"]?["host"] == "h:8080")
        #expect(onDisk["other"] == 1)
        // A restart reads it where it was moved.
        #expect(SettingsStore.file(dir.file(), autosaveDelay: nil)["proxy/host"] == "h:8080")
    }

    @Test func aNamespacedKeyThatBecomesTopLevelKeepsItsValue() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["net": ["timeout": 5, "retries": 2]]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        store.registerRename(of: "timeout", formerly: ["net/timeout"])
        #expect(store["timeout"] == 5)
        try await store.flush()
        let onDisk = try PlistValue(contentsOf: dir.file())
        #expect(onDisk["timeout"] == 5)
        #expect(onDisk["net"]?["timeout"] == nil)
        #expect(onDisk["net"]?["retries"] == 2)
    }

    @Test func aKeyMovedIntoItsOwnSubtreeKeepsItsValue() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["a": 3]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        store.registerRename(of: "a/b/c", formerly: ["a"])
        #expect(store["a/b/c"] == 3)
        try await store.flush()
        #expect(try PlistValue(contentsOf: dir.file())["a"]?["b"]?["c"] == 3)
    }

    @Test func aMoveThatWouldReplaceAnotherValueKeepsTheOldKeyAndReports() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["x": 1, "a": 5]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let diagnostics = collecting(store)
        store.registerRename(of: "a/b", formerly: ["x"])  // `a` holds a number: `a/b` cannot be set without dropping it
        #expect(store["x"] == 1)
        #expect(store["a"] == 5)
        try await store.flush()
        let onDisk = try PlistValue(contentsOf: dir.file())
        #expect(onDisk["x"] == 1)
        #expect(onDisk["a"] == 5)
        #expect(diagnostics.conflicts.count == 1)
        #expect(diagnostics.conflicts.first?.contains("'x'") == true)
    }

    /// The new program moves `x` to `a` (not saved yet); an older program then writes and
    /// flushes `x = 7`; the new program's save keeps that acknowledged write.
    @Test func anOlderProgramsWriteAfterTheMoveIsKept() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["x": 5]).write(to: dir.file())
        let newer = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        newer.registerRename(of: "a", formerly: ["x"])
        #expect(newer["a"] == 5)

        let older = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        older["x"] = 7
        try await older.flush()

        try await newer.flush()
        let onDisk = try PlistValue(contentsOf: dir.file())
        #expect(onDisk["a"] == 5)
        #expect(onDisk["x"] == 7, "the older program's acknowledged write was deleted: \(onDisk)")
        #expect(newer["x"] == 7)
        // Saved again later: still there.
        newer["other"] = true
        try await newer.flush()
        #expect(try PlistValue(contentsOf: dir.file())["x"] == 7)
    }

    @Test func twoSettingsWithTheSameOldNameAreReportedAndTheFirstKeepsTheValue() {
        let store = SettingsStore.inMemory(["x": 5])
        let diagnostics = collecting(store)
        store.registerRename(of: "a", formerly: ["x"])
        store.registerRename(of: "b", formerly: ["x"])
        #expect(store["a"] == 5)
        #expect(store["b"] == nil)
        let conflicts = diagnostics.conflicts
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.contains("'a'") == true && conflicts.first?.contains("'b'") == true, "\(conflicts)")
    }

    @Test func renamesThatFormACycleAreReportedAndTheValueStays() {
        let store = SettingsStore.inMemory(["a": 1])
        let diagnostics = collecting(store)
        store.registerRename(of: "a", formerly: ["b"])
        store.registerRename(of: "b", formerly: ["a"])
        #expect(store["a"] == 1)
        #expect(store["b"] == nil)
        #expect(diagnostics.conflicts.count == 1)
        #expect(store.formerNames(of: "b").isEmpty)
    }

    /// Two programs whose renames go opposite ways: each moves the value once, then leaves it.
    @Test func twoProgramsWithOppositeRenamesDoNotLoop() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["b": 5]).write(to: dir.file())
        let first = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        let second = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        let diagnostics = collecting(first)
        first.registerRename(of: "a", formerly: ["b"])
        second.registerRename(of: "b", formerly: ["a"])
        #expect(first["a"] == 5)
        try await first.flush()
        await second.reload()
        try await second.flush()
        #expect(try PlistValue(contentsOf: dir.file())["b"] == 5)
        let written = try PlistFile.identity(of: dir.file().path)
        for _ in 0..<3 {
            await first.reload()
            try await first.flush()
            await second.reload()
            try await second.flush()
        }
        #expect(try PlistFile.identity(of: dir.file().path) == written, "the two programs kept rewriting the file")
        #expect(try PlistValue(contentsOf: dir.file())["b"] == 5)
        #expect(diagnostics.conflicts.count == 1)
    }
}
