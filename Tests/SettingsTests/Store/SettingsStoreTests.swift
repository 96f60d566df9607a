import Testing
@testable import Settings

struct SettingsStoreTests {
    @Test func layersResolveHighestFirstAndRemovalRevealsBelow() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Network": ["timeout": 30]])
        #expect(store["Network/timeout"] == 30)
        #expect(store.source(of: "Network/timeout") == .defaults)
        store["Network/timeout"] = 60
        #expect(store.source(of: "Network/timeout") == .user)
        store.addOverrides(["Network": ["timeout": 45]])
        #expect(store["Network/timeout"] == 45)
        #expect(store.source(of: "Network/timeout") == .overrides)
        store.setVolatile(5, for: "Network/timeout")
        #expect(store["Network/timeout"] == 5)
        #expect(store.source(of: "Network/timeout") == .volatile)
        store.setVolatile(nil, for: "Network/timeout")
        #expect(store["Network/timeout"] == 45)
        #expect(store.value(for: "Network/timeout", in: .user) == 60)
        store.removeValue(for: "Network/timeout")
        #expect(store.value(for: "Network/timeout", in: .user) == nil)
        #expect(store.source(of: "Network/timeout") == .overrides)
        #expect(store.source(of: "missing") == nil)
    }

    @Test func namespacesCreateAndAddressNestedDictionaries() {
        let store = SettingsStore.inMemory()
        store["Root/Sub/Key"] = "Value"
        store["Root/Sub/Another key"] = "Another value"
        #expect(store.contents(of: .user) == ["Root": ["Sub": ["Key": "Value", "Another key": "Another value"]]])
        #expect(store["Root/Sub"] == ["Key": "Value", "Another key": "Another value"])
        store["Root/Sub/Key"] = nil
        #expect(store["Root/Sub"] == ["Another key": "Another value"])
        store[SettingsKey(components: ["Paths", "a/b"])] = 1
        #expect(store.contents(of: .user)["Paths"] == ["a/b": 1])
        #expect(store[#"Paths/a\/b"#] == 1)
    }

    @Test func aNamespaceReadMergesEveryLayer() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Net": ["timeout": 30, "retries": 3]])
        store["Net/timeout"] = 10
        #expect(store["Net"] == ["timeout": 10, "retries": 3])
        #expect(store.source(of: "Net") == .user)
        #expect(store.effectiveValues == ["Net": ["timeout": 10, "retries": 3]])
    }

    @Test func defaultsRegistrationsMergeDeeplyLaterWins() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["A": ["x": 1, "y": 2], "b": true])
        store.register(defaults: ["A": ["y": 3]])
        #expect(store.contents(of: .defaults) == ["A": ["x": 1, "y": 3], "b": true])
    }

    @Test func writingTheSameValueDoesNotCountAsAChange() {
        let store = SettingsStore.inMemory()
        store["k"] = 1
        let before = store.generation
        store["k"] = 1
        #expect(store.generation == before)
        store["k"] = 2
        #expect(store.generation != before)
    }

    @Test func storesAreIndependent() {
        let a = SettingsStore.inMemory(), b = SettingsStore.inMemory(["k": "b"])
        a["k"] = "a"
        #expect(a["k"] == "a")
        #expect(b["k"] == "b")
        a.removeAllUserValues()
        #expect(a["k"] == nil)
        #expect(b["k"] == "b")
    }
}
