import Testing
@testable import Settings

struct SettingsKeyTests {
    @Test(arguments: [
        ("timeout", ["timeout"]),
        ("Network/Proxy/host", ["Network", "Proxy", "host"]),
        (#"Paths/a\/b"#, ["Paths", "a/b"]),
        (#"back\\slash"#, [#"back\slash"#]),
        ("", [""]),
        ("a//b", ["a", "", "b"]),
    ])
    func parsesPaths(path: String, components: [String]) {
        let key = SettingsKey(path)
        #expect(key.components == components)
        #expect(SettingsKey(components: components) == key)
        #expect(SettingsKey(SettingsKey(components: components).path) == key)
    }

    @Test func componentsEscapeSlashes() {
        let key = SettingsKey(components: ["Paths", "a/b"])
        #expect(key.path == #"Paths/a\/b"#)
        #expect(key.description == #"Paths/a\/b"#)
        #expect(key.parent == "Paths")
        #expect(SettingsKey("a").parent == nil)
        #expect(SettingsKey("a").appending("b/c").components == ["a", "b/c"])
    }
}

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

// MARK: - The wrapper

struct AppSettings {
    let store: SettingsStore
    @Setting var autoPlay: Bool
    @Setting var timeout: Double
    @Setting var user: String?
    @ReadOnlySetting var baseURL: String

    init(store: SettingsStore) {
        self.store = store
        _autoPlay = Setting("autoPlay", default: false, store: store)
        _timeout = Setting("Network/timeout", default: 30.0, store: store)
        _user = Setting("user", store: store)
        _baseURL = ReadOnlySetting("API/baseURL", default: "https://example.com", store: store)
    }
}

final class ClassSettings {
    @Setting var launches: Int
    init(store: SettingsStore) { _launches = Setting("launches", default: 0, store: store) }
}

struct KeylessSettings: SettingsGroup {
    @Setting(default: false, store: .inMemory()) var launchAtStartup: Bool
    @Setting(default: 1, store: .inMemory()) var MYSuperPropertyName: Int
    @Setting("Explicit", default: "x", store: .inMemory()) var named: String
}

struct Container {
    var group = KeylessSettings()
    @Setting(default: 2.5, store: .inMemory()) var zoom: Double
}

struct SettingWrapperTests {
    @Test func readsDefaultsWritesUserLayerAndSeesOtherWriters() {
        let store = SettingsStore.inMemory()
        let s = AppSettings(store: store)
        #expect(s.autoPlay == false)
        #expect(s.$autoPlay.source == nil)
        s.autoPlay = true
        #expect(s.autoPlay == true)
        #expect(store["autoPlay"] == true)
        store["autoPlay"] = false  // another writer: the cache must not hide it
        #expect(s.autoPlay == false)
        store.register(defaults: ["Network": ["timeout": 40.0]])
        #expect(s.timeout == 40)
        #expect(s.$timeout.source == .defaults)
        s.timeout = 12.5
        #expect(store["Network"] == ["timeout": 12.5])
        #expect(s.$timeout.isSet)
        s.$timeout.reset()
        #expect(!s.$timeout.isSet)
        #expect(s.timeout == 40)
    }

    @Test func optionalSettingsRemoveTheKeyWhenSetToNil() {
        let store = SettingsStore.inMemory()
        let s = AppSettings(store: store)
        #expect(s.user == nil)
        s.user = "ada"
        #expect(store["user"] == "ada")
        s.user = nil
        #expect(store["user"] == nil)
        #expect(store.contents(of: .user)["user"] == nil)
    }

    @Test func readOnlySettingsFollowDefaultsAndOverrides() {
        let store = SettingsStore.inMemory()
        let s = AppSettings(store: store)
        #expect(s.baseURL == "https://example.com")
        store.addOverrides(["API": ["baseURL": "https://staging.example.com"]])
        #expect(s.baseURL == "https://staging.example.com")
        #expect(s.$baseURL.source == .overrides)
        #expect(s.$baseURL.key == "API/baseURL")
    }

    @Test func classPropertiesWork() {
        let store = SettingsStore.inMemory()
        let c = ClassSettings(store: store)
        c.launches += 1
        c.launches += 1
        #expect(c.launches == 2)
        #expect(store["launches"] == 2)
    }

    @Test func severalSettingsTypesShareAStore() {
        let store = SettingsStore.inMemory()
        let a = AppSettings(store: store), b = AppSettings(store: store)
        a.autoPlay = true
        #expect(b.autoPlay == true)
    }

    @Test func keylessSettingsTakeTheCapitalisedPropertyNameWhenBound() {
        let store = SettingsStore.inMemory()
        let c = SettingsStore.bind(Container(), to: store)
        #expect(c.group.$launchAtStartup.key == "LaunchAtStartup")
        #expect(c.group.$MYSuperPropertyName.key == "MYSuperPropertyName")
        #expect(c.group.$named.key == "Explicit")
        #expect(c.$zoom.key == "Zoom")
        c.group.launchAtStartup = true
        #expect(store["LaunchAtStartup"] == true)
        #expect(c.$zoom.store === store)
    }

    @Test func derivedKeysFollowMFDynamicsRule() {
        #expect(SettingsStore.derivedKey(for: "launchAtStartup") == "LaunchAtStartup")
        #expect(SettingsStore.derivedKey(for: "_launchAtStartup") == "LaunchAtStartup")
        #expect(SettingsStore.derivedKey(for: "MySuperPropertyName") == "MySuperPropertyName")
    }

    @Test func readingAnUnboundKeylessSettingStopsWithAClearMessage() async {
        await #expect(processExitsWith: .failure) {
            let s = KeylessSettings()
            _ = s.launchAtStartup
        }
    }

    @Test func aStoredValueOfTheWrongTypeReadsAsTheDefaultAndIsReported() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory(["wrongTypeKey": "not a number"])
        let setting = Setting("wrongTypeKey", default: 7, store: store)
        #expect(setting.wrappedValue == 7)
        let reported = DiagnosticsRecorder.diagnostics(for: "wrongTypeKey")
        #expect(reported.map(\.message) == ["key 'wrongTypeKey' has type String, expected Int (from user file); using the default"])
        #expect(reported.first?.kind == .typeMismatch)
        _ = setting.wrappedValue  // cached: not reported again
        #expect(DiagnosticsRecorder.diagnostics(for: "wrongTypeKey").count == 1)
    }
}

struct SettingRulesTests {
    @Test func whenNilSuppliesAValueForMissingOnes() {
        let store = SettingsStore.inMemory()
        let s = Setting<Int?>("rules.whenNil", store: store, rules: SettingRules<Int>().whenNil(use: 10))
        #expect(s.wrappedValue == 10)
        store["rules.whenNil"] = 3
        #expect(s.wrappedValue == 3)
    }

    @Test func ensureAndWhenNilChainOnReadAndWrite() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let rules = SettingRules<Int>().whenNil(use: 10).ensure(that: { $0 >= 10 }, otherwise: 10)
        let s = Setting<Int?>("rules.min10", store: store, rules: rules)
        s.wrappedValue = 8
        #expect(s.wrappedValue == 10)
        #expect(store["rules.min10"] == 10)
        #expect(DiagnosticsRecorder.diagnostics(for: "rules.min10").map(\.message) == ["rule ensure changed the value written to 'rules.min10'"])
        s.wrappedValue = 11
        #expect(s.wrappedValue == 11)
        store["rules.min10"] = 2  // hand-edited file: the read still obeys the rule
        #expect(s.wrappedValue == 10)
    }

    /// Palau's `ensure(when: isBad, use: x)` replaces the values for which the condition is true;
    /// written the Palau way, it must mean the same here (it used to mean the opposite).
    @Test func ensureWhenHasPalausMeaning() {
        let store = SettingsStore.inMemory()
        let lessThan10: @Sendable (Int) -> Bool = { $0 < 10 }
        let s = Setting<Int?>("rules.palau", store: store, rules: SettingRules<Int>().whenNil(use: 10).ensure(when: lessThan10, use: 10))
        #expect(s.wrappedValue == 10)
        s.wrappedValue = 8
        #expect(s.wrappedValue == 10)
        #expect(store["rules.palau"] == 10)
        s.wrappedValue = 11
        #expect(s.wrappedValue == 11)
        store["rules.palau"] = 3
        #expect(s.wrappedValue == 10)
    }

    @Test func rulesStartWithStaticMembers() {
        let store = SettingsStore.inMemory()
        let retries = Setting<Int?>("rules.static", store: store, rules: .whenNil(use: 3).ensure(that: { $0 >= 1 }, otherwise: 1))
        #expect(retries.wrappedValue == 3)
        retries.wrappedValue = 0
        #expect(retries.wrappedValue == 1)
        let level = Setting("rules.static.level", default: 5, store: store, rules: .ensure(when: { $0 > 9 }, use: 9))
        level.wrappedValue = 12
        #expect(level.wrappedValue == 9)
        let positive = Setting("rules.static.positive", default: 1, store: store, rules: .ensure(that: { $0 > 0 }, otherwise: 1))
        positive.wrappedValue = -4
        #expect(positive.wrappedValue == 1)
    }

    @Test func clampKeepsValuesInRange() {
        let store = SettingsStore.inMemory()
        let s = Setting("rules.volume", default: 0.5, store: store, rules: .clamp(0...1))
        s.wrappedValue = 1.5
        #expect(store["rules.volume"] == 1.0)
        store["rules.volume"] = -3.0
        #expect(s.wrappedValue == 0)
    }
}
