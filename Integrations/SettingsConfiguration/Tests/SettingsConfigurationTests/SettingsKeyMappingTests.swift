import Configuration
import Settings
import SettingsConfiguration
import SettingsPlist
import Testing

/// One mapping, both ways: a `ConfigReader` over `SettingsProvider` reads a configuration key at
/// the store key a provider layer answers at, and `store.source(of:)` names the layer it read.
struct SettingsKeyMappingTests {
    static let mappings: [(String, SettingsKeyMapping)] = [
        ("standard", .standard), ("dotted", .dotted), ("namespace", .namespace("Server/config")),
    ]

    @Test(arguments: mappings.map(\.0))
    func eachConfigurationKeyHasOneStoreKeyThatMapsBack(name: String) throws {
        let mapping = try #require(Self.mappings.first { $0.0 == name }?.1)
        for key: AbsoluteConfigKey in ["port", "http.port", "http.server.port", ["a/b", "c"]] {
            #expect(mapping.configKey(mapping.storeKey(key)) == key, "\(name): \(key) -> \(mapping.storeKey(key))")
        }
    }

    @Test func storeKeysMapToTheConfigurationKeysThatMapBackToThem() {
        #expect(SettingsKeyMapping.standard.configKey("http/port") == ["http", "port"])
        #expect(SettingsKeyMapping.standard.storeKey(["http", "port"]) == "http/port")
        #expect(SettingsKeyMapping.dotted.configKey(SettingsKey(components: ["http.port"])) == ["http", "port"])
        #expect(SettingsKeyMapping.dotted.storeKey(["http", "port"]) == SettingsKey(components: ["http.port"]))
        #expect(SettingsKeyMapping.dotted.configKey("http/port") == nil, "a nested key is outside the dotted mapping")
        let namespace = SettingsKeyMapping.namespace("Server")
        #expect(namespace.configKey("Server/http/port") == ["http", "port"])
        #expect(namespace.configKey("http/port") == nil, "a key outside the namespace")
        #expect(namespace.configKey("Server") == nil, "the namespace itself")
    }

    /// The case: the user's `http.port` (top-level, as `settings write guide http.port 9002`
    /// writes it) and a shipped provider's `http.port` below the user's file. The reader and the
    /// store agree on which one is read, whichever mapping is used, and a write at the mapped key
    /// reaches both.
    @Test(arguments: mappings.map(\.0))
    func theReaderAndTheStoreAgreeOnTheKeyAndItsLayer(name: String) throws {
        let mapping = try #require(Self.mappings.first { $0.0 == name }?.1)
        let store = SettingsStore.inMemory(["http.port": 9002])
        store.addProvider(InMemoryProvider(name: "shipped", values: ["http.port": 80]), placement: .below(.user), keyMapping: mapping)
        let reader = ConfigReader(provider: SettingsProvider(store: store, keyMapping: mapping))
        let storeKey = mapping.storeKey("http.port")
        let expected = name == "dotted" ? 9002 : 80  // only the dotted mapping reads the top-level `http.port`
        #expect(reader.int(forKey: "http.port") == expected)
        #expect(store.value(for: storeKey) == .integer(PlistInteger(Int64(expected))))
        #expect(store.source(of: storeKey) == (name == "dotted" ? .user : .provider("InMemoryProvider[shipped]")))
        store[storeKey] = 9003
        #expect(reader.int(forKey: "http.port") == 9003)
        #expect(store.source(of: storeKey) == .user)
        store.removeValue(for: storeKey)
        #expect(reader.int(forKey: "http.port") == 80)
        #expect(store.source(of: storeKey) == .provider("InMemoryProvider[shipped]"))
    }

    @Test func theStandardMappingReadsOnlyTheNestedKey() {
        // Before, `http.port` fell back to the top-level key `http.port` when `http/port` had no
        // value: the reader read 9002 where `store.source(of: "http/port")` said nothing had it.
        let store = SettingsStore.inMemory(["http.port": 9002])
        let reader = ConfigReader(provider: SettingsProvider(store: store))
        #expect(reader.int(forKey: "http.port", default: 8080) == 8080)
        #expect(store.source(of: "http/port") == nil)
        store["http/port"] = 9002
        #expect(reader.int(forKey: "http.port", default: 8080) == 9002)
        #expect(store.source(of: "http/port") == .user)
    }
}
