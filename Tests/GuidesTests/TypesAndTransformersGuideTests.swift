import Foundation
import Settings
import SettingsTestSupport
import Testing

// Docs/TypesAndTransformers.md has no sample these can run: its one block of statements registers
// a `Date` transformer for the whole process (compiled, not run: Tools/extract-doc-blocks.py), and
// its types are `fileprivate` to the generated file. So what the guide shows is checked here, by
// hand, on copies: a type that stores itself, the built-in types, a per-setting transformer.
extension Guide.Temperature: SettingsValue {
    public static var settingsTransformer: SettingsTransformer<Guide.Temperature> { .celsius }
}

/// What Docs/TypesAndTransformers.md shows, checked by hand (see above).
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
