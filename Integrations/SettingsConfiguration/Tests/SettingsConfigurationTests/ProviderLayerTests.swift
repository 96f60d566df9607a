import Configuration
import Foundation
import Settings
import SettingsConfiguration
import SettingsPlist
import Testing

struct ProviderLayerTests {
    struct ServerSettings {
        @Setting("http/port", default: 80) var port: Int
        @Setting("log/level", default: "info") var level: String
    }

    @Test func aProviderAboveTheUserFileWinsAndSourceOfNamesIt() {
        let store = SettingsStore.inMemory(["http": ["port": 8000], "log": ["level": "info"]])
        let environment = EnvironmentVariablesProvider(environmentVariables: ["HTTP_PORT": "8080", "LOG_LEVEL": "7"])
        #expect(store.addProvider(environment, placement: .above(.user)))
        let settings = SettingsStore.bind(ServerSettings(), to: store)
        #expect(settings.port == 8080)
        #expect(store.source(of: "http/port") == .provider("EnvironmentVariablesProvider"))
        #expect(settings.$port.source == .provider("EnvironmentVariablesProvider"))
        #expect(settings.level == "7", "text is kept as text where the layers below hold text")
        settings.port = 9000                                    // writes still go to the user's file
        #expect(store.value(for: "http/port", in: .user) == 9000)
        #expect(settings.port == 8080)
        #expect(store.externalLayerNames == ["EnvironmentVariablesProvider"])
        #expect(!store.addProvider(environment, placement: .above(.user)), "a second layer of the same name is refused")
    }

    @Test func aProviderBelowTheUserFileShowsWhereTheUserHasNoValue() {
        let store = SettingsStore.inMemory(["http": ["port": 8000]])
        store.register(defaults: ["http": ["port": 1, "host": "default"]])
        let shipped = InMemoryProvider(name: "shipped", values: ["http.port": 7000, "http.host": "example.com"])
        store.addProvider(shipped, placement: .below(.user))
        #expect(store["http/port"] == 8000)
        #expect(store.source(of: "http/port") == .user)
        #expect(store["http/host"] == "example.com")
        #expect(store.source(of: "http/host") == .provider("InMemoryProvider[shipped]"))
        store.removeValue(for: "http/port")
        #expect(store["http/port"] == 7000)
        store.removeExternalLayer(named: "InMemoryProvider[shipped]")
        #expect(store["http/port"] == 1)
        #expect(store.externalLayerNames.isEmpty)
    }

    @Test func providersAtTheSameSpotRankInTheOrderTheyWereAdded() {
        let store = SettingsStore.inMemory()
        store.addProvider(InMemoryProvider(name: "cli", values: ["port": 1]), placement: .above(.user))
        store.addProvider(InMemoryProvider(name: "env", values: ["port": 2, "host": "h"]), placement: .above(.user))
        #expect(store["port"] == 1)
        #expect(store.externalLayerNames == ["InMemoryProvider[cli]", "InMemoryProvider[env]"])
        #expect(store.source(of: "host") == .provider("InMemoryProvider[env]"))
    }

    @Test func aProvidersUpdatesReachSettingObserversAndStoreObservers() async throws {
        let store = SettingsStore.inMemory()
        let provider = MutableInMemoryProvider(name: "live", initialValues: ["log.level": "info"])
        store.addProvider(provider, placement: .above(.user))
        let settings = SettingsStore.bind(ServerSettings(), to: store)
        #expect(settings.level == "info")
        let changes = store.changes
        let (seen, seenContinuation) = AsyncStream.makeStream(of: String.self)
        let observation = settings.$level.onChange { new, _ in seenContinuation.yield(new) }
        defer { observation.cancel() }
        provider.setValue("debug", forKey: "log.level")
        var iterator = changes.makeAsyncIterator()
        let change = try #require(await iterator.next())
        #expect(change.origin == .provider)
        #expect(change.affects("log/level"))
        #expect(settings.level == "debug")
        #expect(store.source(of: "log/level") == .provider("MutableInMemoryProvider[live]"))
        var seenIterator = seen.makeAsyncIterator()
        #expect(await seenIterator.next() == "debug")
    }

    @Test func theWatchEndsWhenTheStoreGoes() async throws {
        let provider = MutableInMemoryProvider(name: "live", initialValues: ["a": 1])
        weak var weakStore: SettingsStore?
        do {
            let store = SettingsStore.inMemory()
            store.addProvider(provider, placement: .above(.user))
            #expect(store["a"] == 1)
            weakStore = store
        }
        #expect(weakStore == nil, "the provider's watch does not keep the store alive")
        provider.setValue(2, forKey: "a")   // nobody left to tell: must not crash
    }
}
