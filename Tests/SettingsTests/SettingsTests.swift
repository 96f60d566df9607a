import Testing
import Settings

struct SmokeSettings {
    let store: SettingsStore
    @Setting var autoPlay: Bool
    @Setting var timeout: Double
    @Setting var user: String?

    init(store: SettingsStore) {
        self.store = store
        _autoPlay = Setting("autoPlay", default: false, store: store)
        _timeout = Setting("Network/timeout", default: 30.0, store: store)
        _user = Setting("user", store: store)
    }
}

struct SettingsStoreSmokeTests {
    @Test func layersResolveHighestFirstAndRemovalRevealsBelow() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Network": ["timeout": 30]])
        #expect(store["Network/timeout"] == 30)
        #expect(store.source(of: "Network/timeout") == .defaults)
        store["Network/timeout"] = 60
        #expect(store.source(of: "Network/timeout") == .user)
        store.setVolatile(5, for: "Network/timeout")
        #expect(store["Network/timeout"] == 5)
        store.setVolatile(nil, for: "Network/timeout")
        store.removeValue(for: "Network/timeout")
        #expect(store["Network/timeout"] == 30)
        #expect(store.source(of: "Network/timeout") == .defaults)
    }

    @Test func wrapperReadsWritesAndCachesAcrossChanges() {
        let store = SettingsStore.inMemory()
        let s = SmokeSettings(store: store)
        #expect(s.autoPlay == false)
        s.autoPlay = true
        #expect(s.autoPlay == true)
        #expect(store["autoPlay"] == true)
        store["autoPlay"] = false
        #expect(s.autoPlay == false)
        s.timeout = 12.5
        #expect(store["Network"] == ["timeout": 12.5])
        #expect(s.$timeout.isSet)
        s.$timeout.reset()
        #expect(s.timeout == 30)
        #expect(s.user == nil)
        s.user = "ada"
        #expect(store["user"] == "ada")
        s.user = nil
        #expect(store["user"] == nil)
    }
}
