import Settings
import Testing

/// `SettingsStore.snapshot()` (every layer at one instant) and `SettingsStore.generation`.
struct SettingsSnapshotTests {
    @Test func aSnapshotKeepsEveryLayerAsItWas() {
        let store = SettingsStore.inMemory(["volume": 0.5])
        store.register(defaults: ["theme": "light"])
        store.addExternalLayer(named: "shipped", placement: .below(.defaults)) { key, _ in key == "region" ? "eu" : nil }
        let snapshot = store.snapshot()
        store["volume"] = 0.9
        store["theme"] = "dark"
        store.updateExternalLayer(named: "shipped") { key, _ in key == "region" ? "us" : nil }
        #expect(snapshot.value(for: "volume") == 0.5)
        #expect(snapshot.source(of: "theme") == .defaults)
        #expect(snapshot.value(for: "region") == "eu", "an external layer is read through the lookup it had")
        #expect(snapshot.source(of: "region") == .provider("shipped"))
        #expect(snapshot.effectiveValues == ["theme": "light", "volume": 0.5])
        #expect(store.value(for: "region") == "us")
        #expect(store.snapshot() != snapshot)
        #expect(store.snapshot() == store.snapshot())
    }

    @Test func theGenerationChangesWithEveryChangeAndOnlyThen() {
        let store = SettingsStore.inMemory(["volume": 0.5])
        let start = store.generation
        _ = store["volume"]
        store["volume"] = 0.5
        #expect(store.generation == start, "a read, or a write of the value already there, changes nothing")
        store["volume"] = 0.9
        let written = store.generation
        #expect(written != start)
        store.register(defaults: ["theme": "light"])
        #expect(store.generation != written)
    }
}
