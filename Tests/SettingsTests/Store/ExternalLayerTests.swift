import Foundation
import Settings
import Synchronization
import Testing

/// Read-only layers whose values come from outside the store (`addExternalLayer`).
struct ExternalLayerTests {
    /// A lookup over a fixed dictionary of key paths, recording the hints it is given.
    final class Source: Sendable {
        let values: Mutex<[String: PlistValue]>
        let hints = Mutex<[String: PlistValue?]>([:])
        init(_ values: [String: PlistValue]) { self.values = Mutex(values) }
        var lookup: @Sendable (SettingsKey, PlistValue?) -> PlistValue? {
            { key, hint in
                self.hints.withLock { $0[key.path] = hint }
                return self.values.withLock { $0[key.path] }
            }
        }
    }

    @Test func aLayerAboveTheUserFileHidesItAndSourceOfNamesIt() {
        let store = SettingsStore.inMemory(["port": 80, "host": "file"])
        let source = Source(["port": 8080])
        #expect(store.addExternalLayer(named: "env", placement: .above(.user), lookup: source.lookup))
        #expect(store["port"] == 8080)
        #expect(store.source(of: "port") == .provider("env"))
        #expect(source.hints.withLock { $0["port"] } == .some(80), "the value below is the type hint")
        #expect(store.source(of: "host") == .user)
        store["port"] = 9000                                   // writes go to the user's file
        #expect(store.value(for: "port", in: .user) == 9000)
        #expect(store["port"] == 8080)
        #expect(!store.addExternalLayer(named: "env", placement: .below(.user), lookup: source.lookup))
        #expect(SettingsLayer.provider("env").name == "env")
    }

    @Test func aLayerBelowTheUserFileShowsWhereTheFileHasNoValue() {
        let store = SettingsStore.inMemory(["port": 80])
        store.register(defaults: ["port": 1, "host": "default", "Net": ["retries": 3]])
        store.addExternalLayer(named: "shipped", placement: .below(.user), lookup: Source(["port": 7000, "host": "shipped"]).lookup)
        #expect(store["port"] == 80)
        #expect(store["host"] == "shipped")
        #expect(store.source(of: "host") == .provider("shipped"))
        #expect(store.effectiveValues == ["port": 80, "host": "shipped", "Net": ["retries": 3]])
        store.removeValue(for: "port")
        #expect(store["port"] == 7000)
        store.removeExternalLayer(named: "shipped")
        #expect(store["port"] == 1)
        #expect(store.externalLayerNames.isEmpty)
    }

    @Test func layersAtOnePlaceRankInTheOrderTheyWereAdded() {
        let store = SettingsStore.inMemory()
        store.addExternalLayer(named: "cli", placement: .above(.user), lookup: Source(["a": 1]).lookup)
        store.addExternalLayer(named: "env", placement: .above(.user), lookup: Source(["a": 2, "b": 2]).lookup)
        store.addExternalLayer(named: "top", placement: .above(.volatile), lookup: Source(["b": 3]).lookup)
        #expect(store.externalLayerNames == ["top", "cli", "env"])
        #expect(store["a"] == 1)
        #expect(store["b"] == 3)
    }

    @Test func anUpdateIsAnnouncedToObserversOfTheKeysItChanged() async {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["level": "info", "other": 1])
        store.addExternalLayer(named: "live", placement: .above(.user), lookup: Source([:]).lookup)
        #expect(store["level"] == "info")
        let changes = store.changes
        store.updateExternalLayer(named: "live", lookup: Source(["level": "debug"]).lookup)
        var iterator = changes.makeAsyncIterator()
        let change = await iterator.next()
        #expect(change == SettingsChange(keys: ["level"], origin: .provider))
        #expect(store["level"] == "debug")
        #expect(store.source(of: "level") == .provider("live"))
    }

    @Test func aCachedSettingSeesTheLayerChange() {
        let store = SettingsStore.inMemory()
        let setting = Setting("level", default: "info", store: store)
        #expect(setting.wrappedValue == "info")
        store.addExternalLayer(named: "live", placement: .above(.user), lookup: Source(["level": "debug"]).lookup)
        #expect(setting.wrappedValue == "debug")
        #expect(setting.source == .provider("live"))
        store.updateExternalLayer(named: "live", lookup: Source([:]).lookup)
        #expect(setting.wrappedValue == "info")
    }

    @Test func builtInLayersStillCompareByHeight() {
        #expect(SettingsLayer.volatile < .defaults)
        #expect(SettingsLayer.defaults < .provider("a"))
        #expect(SettingsLayer.allCases == [.locked, .volatile, .overrides, .user, .system, .defaults])
    }
}
