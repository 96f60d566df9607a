import Configuration
import ConfigurationTesting
import Foundation
import Settings
import SettingsConfiguration
import SettingsPlist
import Testing

struct SettingsProviderTests {
    @Test func passesSwiftConfigurationsCompatibilitySuiteInMemory() async throws {
        let store = SettingsStore.inMemory(compatValues)
        try await ProviderCompatTest(provider: SettingsProvider(store: store)).runTest()
    }

    @Test func passesSwiftConfigurationsCompatibilitySuiteOnAFileSpreadOverLayers() async throws {
        let dir = try TempDir()
        let writer = dir.store()
        for (key, value) in compatValues where key != "other" { writer[SettingsKey(components: [key])] = value }
        try await writer.flush()
        let store = dir.store()
        store.register(defaults: ["other": compatValues["other"] ?? [:]])
        #expect(store.source(of: "other/int") == .defaults)
        try await ProviderCompatTest(provider: SettingsProvider(store: store)).runTest()
    }

    @Test func aTypeMismatchNamesTheKeyBothTypesAndTheLayer() throws {
        let store = SettingsStore.inMemory(["http": ["port": "eighty"]])
        let provider = SettingsProvider(store: store)
        let error = try #require(throws: SettingsError.self) { try provider.value(forKey: ["http", "port"], type: .int) }
        #expect(error.code == .typeMismatch)
        #expect(error.description == "key 'http/port' has type String, expected Int (from user file) (configuration key 'http.port')")
        let reader = ConfigReader(provider: provider)
        #expect(reader.int(forKey: "http.port", default: 80) == 80)
        #expect(throws: SettingsError.self) { try reader.requiredInt(forKey: "http.port") }
    }

    @Test(arguments: [
        (PlistValue.integer(3), ConfigType.double, ConfigContent.double(3)),
        (.real(2), .int, .int(2)),
        (.integer(1), .bool, .bool(true)),
        (.bool(false), .int, .int(0)),
        (.array([]), .intArray, .intArray([])),
        (.array([.integer(1), .real(2)]), .doubleArray, .doubleArray([1, 2])),
    ])
    func numbersConvertAsThePropertyListProviderConvertsThem(stored: PlistValue, type: ConfigType, expected: ConfigContent) throws {
        let provider = SettingsProvider(store: .inMemory(["v": stored]))
        #expect(try provider.value(forKey: ["v"], type: type).value?.content == expected)
    }

    @Test(arguments: [
        (PlistValue.real(2.5), ConfigType.int),
        (.string("1"), .int),
        (.integer(1), .string),
        (.array([.string("a")]), .intArray),
        (.date(Date(timeIntervalSince1970: 0)), .string),
        (.dictionary(["a": 1]), .string),
    ])
    func valuesThatDoNotConvertThrow(stored: PlistValue, type: ConfigType) {
        let provider = SettingsProvider(store: .inMemory(["v": stored]))
        #expect(throws: SettingsError.self) { try provider.value(forKey: ["v"], type: type) }
    }

    @Test func secretKeysComeBackSecretAndAccessLogsRedactThem() throws {
        let store = SettingsStore.inMemory(["db": ["password": "hunter2", "host": "localhost"]])
        let provider = SettingsProvider(store: store)
        #expect(try provider.value(forKey: ["db", "password"], type: .string).value?.isSecret == true)
        #expect(try provider.value(forKey: ["db", "host"], type: .string).value?.isSecret == false)
        #expect(try provider.snapshot().value(forKey: ["db", "password"], type: .string).value?.isSecret == true)
    }

    @Test func aSnapshotStaysAsItWasWhileTheStoreChanges() throws {
        let store = SettingsStore.inMemory(["a": 1, "b": 2])
        let provider = SettingsProvider(store: store)
        let snapshot = provider.snapshot()
        store["a"] = 10
        store["b"] = 20
        #expect(try snapshot.value(forKey: ["a"], type: .int).value?.content == .int(1))
        #expect(try snapshot.value(forKey: ["b"], type: .int).value?.content == .int(2))
        #expect(try provider.value(forKey: ["a"], type: .int).value?.content == .int(10))
        #expect(provider.providerName == "SettingsProvider[in memory]")
    }

    @Test func watchValueEmitsTheCurrentValueThenEachChangeOnce() async throws {
        let store = SettingsStore.inMemory(["log": ["level": "info"]])
        let provider = SettingsProvider(store: store)
        let seen = try await provider.watchValue(forKey: ["log", "level"], type: .string) { updates in
            var seen: [String?] = []
            for await result in updates {
                let value = try result.get().value.flatMap { try? $0.content.stringValue() }
                seen.append(value)
                switch seen.count {
                case 1: store["other"] = 1; store["log/level"] = "debug"
                case 2: store["log/level"] = "debug"; store.removeValue(for: "log/level")
                default: return seen
                }
            }
            return seen
        }
        #expect(seen == ["info", "debug", nil])
    }

    @Test func watchSnapshotEmitsANewSnapshotAfterAChange() async throws {
        let store = SettingsStore.inMemory(["n": 1])
        let provider = SettingsProvider(store: store)
        let values = try await provider.watchSnapshot { updates in
            var values: [ConfigContent?] = []
            for await snapshot in updates {
                values.append(try snapshot.value(forKey: ["n"], type: .int).value?.content)
                if values.count == 2 { break }
                store["n"] = 2
            }
            return values
        }
        #expect(values == [.int(1), .int(2)])
    }

    @Test func fetchValueReloadsTheFileFirst() async throws {
        let dir = try TempDir()
        let store = SettingsStore.file(dir.url.appending(path: "settings.plist"), externalChanges: .ignored)
        let provider = SettingsProvider(store: store)
        #expect(try provider.value(forKey: ["port"], type: .int).value == nil)
        let other = dir.store()
        other["port"] = 9090
        try await other.flush()
        #expect(try await provider.fetchValue(forKey: ["port"], type: .int).value?.content == .int(9090))
    }
}

extension ConfigContent {
    /// The string inside, for tests.
    func stringValue() throws -> String {
        guard case .string(let text) = self else { throw SettingsError(.typeMismatch) }
        return text
    }
}
