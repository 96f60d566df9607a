import Foundation
import Synchronization
import Testing
@testable import Settings
import SettingsTestSupport

/// The hooks a sync integration builds on: every user-layer change, `.sync` origin, and a
/// conditional batch write.
@Suite("SettingsStore: integration hooks")
struct SettingsStoreIntegrationsTests {
    final class Recorder: Sendable {
        let changes = Mutex<[SettingsChange]>([])
        var all: [SettingsChange] { changes.locked { $0 } }
        func record(_ change: SettingsChange) { changes.locked { $0.append(change) } }
    }

    @Test func everyUserLayerWriteIsHeardAsLeaves() {
        let store = SettingsStore.inMemory()
        let recorder = Recorder()
        let tap = store.onUserLayerChange { recorder.record($0) }
        store["a"] = 1
        store["Network"] = ["timeout": 30, "proxy": ["host": "h"]]
        store["a"] = 1                                       // unchanged: nothing
        store.removeValue(for: "Network/proxy")
        let seen = recorder.all
        #expect(seen.map(\.origin) == [.write, .write, .write])
        #expect(seen.map { Set($0.keys.map(\.path)) } == [["a"], ["Network/timeout", "Network/proxy/host"], ["Network/proxy/host"]])
        tap.cancel()
        store["b"] = 2
        #expect(recorder.all.count == 3)
    }

    @Test func changesHiddenByAHigherLayerAreHeard() {
        let store = SettingsStore.inMemory()
        store.setVolatile(9, for: "k")
        let user = Recorder()
        let effective = Recorder()
        let tap = store.onUserLayerChange { user.record($0) }
        let observer = store.onChange { effective.record($0) }
        store["k"] = 1                                        // hidden by the volatile value
        #expect(user.all.map(\.keys) == [["k"]])
        #expect(effective.all.isEmpty)
        store.setVolatile(8, for: "k")                        // another layer: not the user layer's
        #expect(user.all.count == 1)
        _ = (tap, observer)
    }

    @Test func reloadsOfAFileChangedElsewhereAreHeardAsExternal() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["a": 1, "b": 2]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        let recorder = Recorder()
        let tap = store.onUserLayerChange { recorder.record($0) }
        try PlistValue.dictionary(["a": 1, "b": 3, "c": ["d": true]]).write(to: dir.file())
        await store.reload()                                  // what the watcher does, at once
        #expect(recorder.all.map(\.origin) == [.externalFile])
        let keys = Set((recorder.all.first?.keys ?? []).map(\.path))
        #expect(keys == ["b", "c/d"])
        _ = tap
    }

    @Test func reloadingBeforeTheFirstReadLoadsTheFileAndAnInMemoryStoreHasNothingToReload() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["a": 1]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        await store.reload()
        let loaded = store.loaded.load(ordering: .acquiring)
        #expect(loaded)
        #expect(store["a"] == 1)
        let memory = SettingsStore.inMemory(["a": 2])
        await memory.reload()
        #expect(memory["a"] == 2)
    }

    @Test func aConditionalBatchAppliesUnderTheLockAnnouncesSyncAndIsSaved() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        store["local"] = "mine"
        let recorder = Recorder()
        let user = Recorder()
        let observer = store.onChange { recorder.record($0) }
        let tap = store.onUserLayerChange { user.record($0) }
        let applied = store.applyToUserLayer([
            (key: "remote", value: "theirs"),
            (key: "local", value: "theirs too"),               // refused below: changed locally
            (key: "Group/x", value: 1),
            (key: "gone", value: nil),                         // already absent: no change
        ]) { key, current in key.path != "local" }
        #expect(applied.map(\.path) == ["remote", "Group/x"])
        #expect(store["local"] == "mine" && store["remote"] == "theirs" && store["Group/x"] == 1)
        #expect(recorder.all.map(\.origin) == [.sync])
        let announced = Set((recorder.all.first?.keys ?? []).map(\.path))
        #expect(announced.isSuperset(of: ["remote"]))
        #expect(user.all.map(\.origin) == [.sync])
        let leaves = Set((user.all.first?.keys ?? []).map(\.path))
        #expect(leaves == ["remote", "Group/x"])
        try await store.flush()
        #expect(try PlistValue(contentsOf: dir.file()) == ["local": "mine", "remote": "theirs", "Group": ["x": 1]])
        _ = (observer, tap)
    }
}
