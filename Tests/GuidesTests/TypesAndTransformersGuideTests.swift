import Foundation
import Settings
import SettingsTestSupport
import Testing

// Docs/TypesAndTransformers.md: the two ways that are not exercised elsewhere. The conformance
// gives Temperature the transformer it already uses in the doc samples, and the registration is
// compiled but never run (it would change how every Date in the test run is stored).
extension Guide.Temperature: SettingsValue {
    public static var settingsTransformer: SettingsTransformer<Guide.Temperature> { .celsius }
}

func registerUnixDates() {
    SettingsTransformers.register(SettingsTransformer<Date>(
        typeName: "Date (Unix seconds)",
        encode: { .real($0.timeIntervalSince1970) },
        decode: { $0.doubleValue.map(Date.init(timeIntervalSince1970:)) }))
}

/// The samples of Docs/TypesAndTransformers.md, run.
@Suite("Guide: Types and transformers")
struct TypesAndTransformersGuideTests {
    @Test func aTypeThatStoresItself() {
        struct Weather { @Setting("outside", default: Guide.Temperature(celsius: 20), store: .inMemory()) var outside: Guide.Temperature }
        let weather = Weather()
        weather.outside = Guide.Temperature(celsius: 3)
        #expect(weather.$outside.store["outside"] == 3.0)
    }

    @Test func builtInTypesAreStoredReadably() {
        let typed = Guide.Typed()
        typed.theme = .dark
        typed.profile = Guide.Profile(name: "Ada", volume: 1)
        #expect(typed.$accent.store["accent"] == nil)                       // the default is not written
        #expect(typed.$theme.store["theme"] == "dark")
        #expect(typed.$profile.store["profile"] == ["name": "Ada", "volume": 1.0])
        typed.homepage = URL(string: "https://swift.org")!
        #expect(typed.$homepage.store["homepage"] == "https://swift.org")
    }

    @Test func perSettingTransformerStoresAnyType() {
        let store = SettingsStore.inMemory()
        let settings = SettingsStore.bind(ReadmeSettings(), to: store)
        #expect(settings.outside == Guide.Temperature(celsius: 20))
        settings.outside = Guide.Temperature(celsius: -3.5)
        #expect(store["outside"] == .real(-3.5))
        #expect(settings.outside.celsius == -3.5)
    }
}
