import Configuration
import Foundation
import Settings
import SettingsConfiguration
import SettingsPlist
import Testing

struct ConfigReaderDecodingTests {
    struct Window: Codable, Hashable {
        var width = 800
        var height = 600
    }

    struct Profile: SettingsModel, Codable, Hashable {
        var name = "Guest"
        var age = 0
        var tags: [String] = []
        var window = Window()
    }

    @Test func aModelDecodesFromFieldsSpreadOverSeveralProviders() {
        let environment = EnvironmentVariablesProvider(environmentVariables: ["PROFILE_NAME": "Ada", "PROFILE_WINDOW_WIDTH": "1024"])
        let store = SettingsStore.inMemory(["profile": ["age": 36, "tags": ["math", "engines"]]])
        let reader = ConfigReader(providers: [environment, SettingsProvider(store: store)])
        var issues: [ModelFieldIssue] = []
        let profile = reader.decode(Profile.self, at: "profile", issues: &issues)
        #expect(profile == Profile(name: "Ada", age: 36, tags: ["math", "engines"], window: Window(width: 1024, height: 600)))
        #expect(issues.isEmpty)
    }

    @Test func aFieldThatDoesNotDecodeKeepsItsDefaultAndIsReportedTheOthersDecode() {
        let store = SettingsStore.inMemory(["profile": ["name": "Ada", "age": "old", "window": ["width": "wide", "height": 700]]])
        let reader = ConfigReader(provider: SettingsProvider(store: store))
        var issues: [ModelFieldIssue] = []
        let profile = reader.decode(Profile.self, at: "profile", issues: &issues)
        #expect(profile == Profile(name: "Ada", age: 0, tags: [], window: Window(width: 800, height: 700)))
        #expect(issues.map(\.field).sorted() == ["age", "window.width"])
        #expect(issues.allSatisfy { $0.message.contains("string") })
    }

    @Test func nothingConfiguredGivesTheDefaultModel() {
        let reader = ConfigReader(provider: InMemoryProvider(values: [:]))
        var issues: [ModelFieldIssue] = []
        #expect(reader.decode(Profile.self, at: "profile", issues: &issues) == Profile())
        #expect(issues.isEmpty)
    }
}
