import Foundation
import Testing
import Settings
import SettingsTestSupport

// The samples of README.md (and the types Docs/Settings.md shares with it), compiled and run, so
// the docs stay true.

extension Guide {
    /// The README's own type with a transformer (`Temperature` in its samples).
    struct Temperature: Sendable, Equatable {
        var celsius: Double
    }
}

extension SettingsTransformer where Value == Guide.Temperature {
    static var celsius: SettingsTransformer<Guide.Temperature> {
        SettingsTransformer(typeName: "Temperature", encode: { .real($0.celsius) },
                            decode: { $0.doubleValue.map(Guide.Temperature.init(celsius:)) })
    }
}

struct ReadmeSettings {
    @Setting("autoPlay", default: false) var autoPlay: Bool
    @Setting("Network/timeout", default: 30.0) var timeout: Double
    @Setting("Network/proxy") var proxy: String?
    @Setting("accent", default: SettingsColor(hex: "#FF8800")!) var accent: SettingsColor
    @Setting("outside", default: Guide.Temperature(celsius: 20), transformer: .celsius) var outside: Guide.Temperature
    @Setting("retries", rules: .whenNil(use: 3).ensure(that: { $0 >= 1 }, otherwise: 1)) var retries: Int?
    @Setting("volume", default: 0.5, rules: .clamp(0...1)) var volume: Double
}

/// The README's quick start, run as written.
@Suite("Guide: README")
struct ReadmeGuideTests {
    @Test func readmeQuickStartWorksAsWritten() throws {
        let temporary = try TemporaryDirectory()
        let dir = temporary.url
        let defaultsURL = dir.appending(path: "Defaults.plist")
        let defaults: PlistValue = ["autoPlay": true, "Network": ["timeout": 12.0]]
        try defaults.write(to: defaultsURL)

        let store = SettingsStore.inMemory()
        let settings = SettingsStore.bind(ReadmeSettings(), to: store)
        let warnings = try store.registerDefaults(contentsOf: defaultsURL, checking: settings)
        #expect(warnings.map(\.key) == ["Network/proxy", "retries"])
        #expect(settings.autoPlay == true)
        #expect(settings.$timeout.source == .defaults)
        #expect(settings.timeout == 12)
        settings.autoPlay = false
        #expect(settings.$autoPlay.source == .user)
        #expect(settings.accent.hex == "#FF8800")
    }

}
