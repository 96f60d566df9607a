import Dispatch
import Foundation
@testable import Settings
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

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

struct SettingTests {
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

    /// `@Setting var lastUpdate: Date?` needs no arguments, so the memberwise initialiser does not
    /// ask for it (it did: "missing argument for parameter 'lastUpdate'").
    @Test func aKeylessOptionalSettingNeedsNoArguments() {
        struct Defaults {
            @Setting(default: false) var autoPlay: Bool
            @Setting var lastUpdate: Date?
            @ReadOnlySetting var apiHost: String?
        }
        let store = SettingsStore.inMemory(["ApiHost": "example.com"])
        let defaults = SettingsStore.bind(Defaults(), to: store)
        #expect(defaults.lastUpdate == nil)
        #expect(defaults.$lastUpdate.key == "LastUpdate")
        let date = Date(timeIntervalSince1970: 1_000)
        defaults.lastUpdate = date
        #expect(store["LastUpdate"] == .date(date))
        #expect(defaults.lastUpdate == date)
        defaults.lastUpdate = nil
        #expect(store["LastUpdate"] == nil)
        #expect(defaults.apiHost == "example.com")
    }

    /// A non-optional setting declared without a default compiles (the argument-less `init()`
    /// cannot be limited to optionals), and stops with a message saying what to write.
    @Test func aNonOptionalSettingWithoutADefaultStopsWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            struct Broken { @Setting var count: Int }
            _ = SettingsStore.bind(Broken(), to: .inMemory()).count
        }
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
}
