import Configuration
import Foundation
import Settings
import SettingsConfiguration
import SettingsPlist
import Synchronization
import Testing

/// `SettingsProvider.value(forKey:type:)` keeps the last result per key while the store's
/// generation is unchanged: a read again costs a look-up in that cache (settings-config-bench),
/// and no change of any kind is missed.
struct SettingsProviderReadCacheTests {
    /// The provider's reads of `key` as an `Int`.
    static func int(_ provider: SettingsProvider, _ key: AbsoluteConfigKey) throws -> Int? {
        guard case .int(let value)? = try provider.value(forKey: key, type: .int).value?.content else { return nil }
        return value
    }

    @Test func aKeyReadAgainWithNoChangeIsNotLookedUpAgain() throws {
        // A value-dependent secrets rule is asked at every look-up of a value: it counts them.
        let lookUps = Mutex(0)
        let store = SettingsStore.inMemory(["http": ["port": 8080]])
        let provider = SettingsProvider(store: store, secrets: .dynamic { _, _ in
            lookUps.withLock { $0 += 1 }
            return false
        })
        let reader = ConfigReader(provider: provider)
        for _ in 0..<100 { #expect(reader.int(forKey: "http.port") == 8080) }
        #expect(lookUps.withLock { $0 } == 1)
        store["http/port"] = 9000
        for _ in 0..<100 { #expect(reader.int(forKey: "http.port") == 9000) }
        #expect(lookUps.withLock { $0 } == 2)
    }

    @Test func noChangeIsMissed() async throws {
        let dir = try TempDir()
        let store = dir.store()
        let provider = SettingsProvider(store: store)
        #expect(try Self.int(provider, "port") == nil)
        store.register(defaults: ["port": 1])
        #expect(try Self.int(provider, "port") == 1)
        store["port"] = 2
        #expect(try Self.int(provider, "port") == 2)
        store.setVolatile(3, for: "port")
        #expect(try Self.int(provider, "port") == 3)
        store.setVolatile(nil, for: "port")
        let live = MutableInMemoryProvider(name: "live", initialValues: ["port": 4])
        store.addProvider(live, placement: .above(.user))
        #expect(try Self.int(provider, "port") == 4)
        let changes = store.changes
        live.setValue(5, forKey: "port")
        for await change in changes where change.origin == .provider { break }
        #expect(try Self.int(provider, "port") == 5)
        store.removeExternalLayer(named: "MutableInMemoryProvider[live]")
        #expect(try Self.int(provider, "port") == 2)
        try await store.flush()
        let other = dir.store()
        other["port"] = 6
        try await other.flush()
        #expect(try await provider.fetchValue(forKey: "port", type: .int).value?.content == .int(6))
        #expect(try Self.int(provider, "port") == 6)
        #expect(try provider.value(forKey: "port", type: .double).value?.content == .double(6), "another type is read again")
    }
}
