import Configuration
import Settings
import SettingsConfiguration
import SettingsPlist
import Testing

/// `SettingsProvider.snapshot()`: the store's layers at one instant (O(1) to take: see
/// settings-config-bench), read as the store reads them.
struct SettingsProviderSnapshotTests {
    @Test func aSnapshotReadsAProviderLayersKeysThatNoOtherLayerHas() throws {
        // Before, a snapshot was `effectiveValues`, which shows a provider layer's values only at
        // keys another layer has: `http.host` was missing from the snapshot and not from reads.
        let store = SettingsStore.inMemory(["http": ["port": 8000]])
        store.addProvider(InMemoryProvider(name: "shipped", values: ["http.host": "example.com"]), placement: .below(.user))
        let provider = SettingsProvider(store: store)
        #expect(try provider.value(forKey: "http.host", type: .string).value?.content == .string("example.com"))
        let snapshot = provider.snapshot()
        #expect(try snapshot.value(forKey: "http.host", type: .string).value?.content == .string("example.com"))
        #expect(try snapshot.value(forKey: "http.port", type: .int).value?.content == .int(8000))
    }

    @Test func aTypeMismatchInASnapshotNamesTheLayer() throws {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["http": ["port": "eighty"]])
        let snapshot = SettingsProvider(store: store).snapshot()
        store["http/port"] = 80
        let error = try #require(throws: SettingsError.self) { try snapshot.value(forKey: "http.port", type: .int) }
        #expect(error.description == "key 'http/port' has type String, expected Int (from registered defaults) (configuration key 'http.port')")
    }

    @Test func descriptionsListTheKeysAndRedactSecretValues() {
        let store = SettingsStore.inMemory(["db": ["password": "hunter2", "host": "localhost"], "http": ["port": 8080]])
        let provider = SettingsProvider(store: store)
        let listing = #"SettingsProvider[in memory, 3 values: db.host="localhost", db.password=<REDACTED>, http.port=8080]"#
        #expect(String(reflecting: provider.snapshot()) == listing)
        #expect(String(reflecting: provider) == listing)
        #expect(String(describing: provider.snapshot()) == "SettingsProvider[in memory] snapshot")
        #expect(String(describing: provider) == "SettingsProvider[in memory]")
        let named = SettingsProvider(store: store, keyMapping: .namespace("http"), name: "app")
        #expect(String(reflecting: named) == "app[1 values: port=8080]")
    }

    @Test func theGuidesListingIsWhatItPrints() {
        // Docs/Configuration.md, section 1.
        let store = SettingsStore.inMemory(["db": ["url": "postgres://app:pw@db/app", "password": "hunter2"], "http": ["port": 8080]])
        let provider = SettingsProvider(store: store, secrets: .specific(["db/url"]))
        #expect(String(reflecting: provider.snapshot())
            == "SettingsProvider[in memory, 3 values: db.password=<REDACTED>, db.url=<REDACTED>, http.port=8080]")
    }

    @Test func secretsTakeASecretsSpecifierBesidesTheStoresSecretNames() throws {
        let store = SettingsStore.inMemory([
            "db": ["url": "postgres://u:pw@h/db", "host": "localhost", "password": "hunter2"],
            "cache": ["url": "redis://h"],
        ])
        func secret(_ provider: SettingsProvider, _ key: AbsoluteConfigKey) throws -> Bool? {
            try provider.value(forKey: key, type: .string).value?.isSecret
        }
        let specific = SettingsProvider(store: store, secrets: .specific(["db/url"]))
        #expect(try secret(specific, "db.url") == true)
        #expect(try secret(specific, "cache.url") == false)
        #expect(try secret(specific, "db.password") == true, "the store's secret names still count")
        let byValue = SettingsProvider(store: store, secrets: .dynamic { _, value in value.stringValue?.contains("@") == true })
        #expect(try secret(byValue, "db.url") == true)
        #expect(try secret(byValue, "cache.url") == false)
        #expect(try byValue.snapshot().value(forKey: "db.url", type: .string).value?.isSecret == true)
        #expect(String(reflecting: byValue).contains("db.url=<REDACTED>"))
        let all = SettingsProvider(store: store, secrets: .all)
        #expect(try secret(all, "db.host") == true)
        #expect(!String(reflecting: all).contains("localhost"))
    }

    @Test func aKeysContextIsNotUsed() throws {
        let provider = SettingsProvider(store: .inMemory(["http": ["port": 8080]]))
        let withContext = AbsoluteConfigKey(["http", "port"], context: ["region": .string("eu")])
        #expect(try provider.value(forKey: withContext, type: .int).value?.content == .int(8080))
        #expect(try provider.snapshot().value(forKey: withContext, type: .int).value?.content == .int(8080))
    }
}
