import Foundation
import Settings
import Testing
import SettingsTestSupport

// The samples of Docs/GettingStarted.md, DefaultsAndLayers.md, TypesAndTransformers.md and
// Migrating.md, compiled and run (with in-memory stores or temporary files where the docs use
// the shared store or fixed paths).

enum Guide {
    struct AppSettings {
        @Setting var autoPlay: Bool
        @Setting var timeout: Double
        @Setting var proxy: String?
        @Setting var accent: SettingsColor
        init(store: SettingsStore) {
            _autoPlay = Setting("autoPlay", default: false, store: store)
            _timeout = Setting("Network/timeout", default: 30.0, store: store)
            _proxy = Setting("Network/proxy", store: store)
            _accent = Setting("accent", default: SettingsColor(hex: "#FF8800")!, store: store)
        }
    }

    enum Theme: String, Codable, SettingsValue { case system, light, dark }
    struct Profile: Codable, Sendable, Equatable, SettingsValue { var name = "Guest"; var volume = 0.5 }
    struct Typed {
        @Setting("accent", default: SettingsColor(hex: "#FF8800")!, store: .inMemory()) var accent: SettingsColor
        @Setting("homepage", default: URL(string: "https://example.com")!, store: .inMemory()) var homepage: URL
        @Setting("theme", default: Theme.system, store: .inMemory()) var theme: Theme
        @Setting("profile", default: Profile(), store: .inMemory()) var profile: Profile
    }

    // Migrating: MFDynamic
    struct MYAppDefaults {
        @Setting(default: false, store: .inMemory()) var autoPlayVoiceOver: Bool
        @Setting(default: 30.0, store: .inMemory()) var loginTimeoutInterval: TimeInterval
        @Setting var lastUpdate: Date?   // key-less and optional: no arguments at all
    }
    struct MYModelClass: SettingsModel {
        @Archived var backgroundColor = SettingsColor(hex: "#FFFFFF")!
        @Archived var brightness: Float = 1
        @Archived var someURL = URL(string: "https://example.com")!
        var propertyThatWontBeArchived = ""
    }
    // Migrating: PSTSettings
    struct MySettings {
        @Setting(default: false, store: .inMemory()) var flagTheDoesSomething: Bool
        @Setting(default: "", store: .inMemory()) var someStringThatSaysStuff: String
    }
    // Migrating: Palau
    static let lessThan10: @Sendable (Int) -> Bool = { $0 < 10 }
    struct Defaults {
        @Setting("name", store: .inMemory()) var name: String?
        @Setting("intValue", store: .inMemory(), rules: SettingRules<Int>().whenNil(use: 10).ensure(when: lessThan10, use: 10))
        var intValueMin10: Int?
        @Setting("strings", default: [String](), store: .inMemory()) var strings: [String]
    }
}

// Docs/TypesAndTransformers.md: the two ways that are not exercised elsewhere. The conformance
// gives Temperature the transformer it already uses in the doc samples, and the registration is
// compiled but never run (it would change how every Date in the test run is stored).
extension Temperature: SettingsValue {
    public static var settingsTransformer: SettingsTransformer<Temperature> { .celsius }
}

func registerUnixDates() {
    SettingsTransformers.register(SettingsTransformer<Date>(
        typeName: "Date (Unix seconds)",
        encode: { .real($0.timeIntervalSince1970) },
        decode: { $0.doubleValue.map(Date.init(timeIntervalSince1970:)) }))
}

@Suite("Guide samples")
struct GuideSamplesTests {
    @Test func gettingStarted() async throws {
        let dir = try TemporaryDirectory()
        let defaultsURL = dir.file("Defaults.plist")
        try PlistValue.dictionary(["autoPlay": true, "Network": ["timeout": 30.0]]).write(to: defaultsURL)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let settings = Guide.AppSettings(store: store)
        let warnings = try store.registerDefaults(contentsOf: defaultsURL, checking: settings)
        #expect(warnings.map(\.key) == ["Network/proxy"])
        #expect(settings.autoPlay)
        settings.timeout = 60
        #expect(settings.$timeout.source == .user)
        settings.$timeout.reset()
        #expect(settings.timeout == 30)
        settings.timeout = 45
        let seen = Received<String>()
        let observation = settings.$timeout.onChange { new, old in seen.append("timeout \(old) -> \(new)") }
        settings.timeout = 50
        #expect(seen.all == ["timeout 45.0 -> 50.0"])
        try await store.flush()
        #expect(try PlistValue(contentsOf: dir.file())["Network"]?["timeout"] == 50.0)
        _ = observation
    }

    @Test func layersOverridesAndVolatileValues() throws {
        let dir = try TemporaryDirectory()
        let optionsURL = dir.file("Options.plist"), stagingURL = dir.file("Staging.plist")
        try PlistValue.dictionary(["API": ["host": "example.com", "port": 443]]).write(to: optionsURL)
        try PlistValue.dictionary(["API": ["host": "staging.example.com"]]).write(to: stagingURL)
        let store = SettingsStore.inMemory()
        try store.registerDefaults(contentsOf: optionsURL)
        try store.loadOverrides(contentsOf: stagingURL)
        #expect(store["API/host"] == "staging.example.com")
        #expect(store.source(of: "API/host") == .overrides)
        #expect(store["API/port"] == 443)

        store.register(defaults: ["Network": ["timeout": 30]])
        store["Network/timeout"] = 60
        #expect(store.source(of: "Network/timeout") == .user)
        store.setVolatile(5, for: "Network/timeout")
        #expect(store.source(of: "Network/timeout") == .volatile)
        store.applyArguments(["myapp", "-Network/timeout", "7", "-verbose", "YES"])
        #expect(store["Network/timeout"] == 7)
        #expect(store["verbose"] == true)
        _ = store.applyEnvironment(prefix: "MYAPP", ["MYAPP_Network__retries": "3"])
        #expect(store["Network/retries"] == 3)
    }

    @Test func aTypeThatStoresItself() {
        struct Weather { @Setting("outside", default: Temperature(celsius: 20), store: .inMemory()) var outside: Temperature }
        let weather = Weather()
        weather.outside = Temperature(celsius: 3)
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

    @Test func migratingFromMFDynamic() throws {
        let defaults = SettingsStore.bind(Guide.MYAppDefaults(), to: .inMemory())
        defaults.autoPlayVoiceOver = true
        #expect(defaults.$autoPlayVoiceOver.key == "AutoPlayVoiceOver")
        #expect(defaults.$autoPlayVoiceOver.store["AutoPlayVoiceOver"] == true)
        #expect(defaults.lastUpdate == nil)
        #expect(defaults.$lastUpdate.key == "LastUpdate")
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        defaults.lastUpdate = now
        #expect(defaults.$lastUpdate.store["LastUpdate"] == .date(now))

        let dir = try TemporaryDirectory()
        var model = Guide.MYModelClass()
        model.brightness = 0.5
        model.propertyThatWontBeArchived = "scratch"
        try model.save(to: dir.file("Model.plist"))
        let loaded = try Guide.MYModelClass.load(from: dir.file("Model.plist"))
        #expect(loaded.brightness == 0.5)
        #expect(loaded.propertyThatWontBeArchived == "")
        #expect(try PlistValue(contentsOf: dir.file("Model.plist"))["someURL"] == "https://example.com")
    }

    @Test func migratingFromTFOptionsKit() throws {
        let dir = try TemporaryDirectory()
        let optionsURL = dir.file("DefaultOptions.plist"), targetURL = dir.file("Options.plist")
        try PlistValue.dictionary(["My boolean": true, "Root": ["Sub": ["Key": "Value"]], "Tint": "#FF8800"]).write(to: optionsURL)
        try PlistValue.dictionary(["Root": ["Sub": ["Another key": "Target value"]]]).write(to: targetURL)
        let options = try SettingsStore.options(contentsOf: optionsURL, overrides: [targetURL])
        #expect(options.value("My boolean", default: false))
        let loaded: String = try options.requiredValue(for: "Root/Sub/Key")
        #expect(loaded == "Value")
        #expect(options.value("The key for my data", default: "No, default loaded") == "No, default loaded")
        #expect(options.value("Root/Sub/Another key", default: "") == "Target value")
        #expect(options.value("Tint", default: SettingsColor(hex: "#000")!).hex == "#FF8800")
        #expect(throws: SettingsError.self) { let _: String = try options.requiredValue(for: "Root/Missing") }
    }

    @Test func migratingFromPSTSettingsAndAlchemic() {
        let settings = SettingsStore.bind(Guide.MySettings())
        settings.flagTheDoesSomething = true
        #expect(settings.flagTheDoesSomething)
        #expect(settings.$flagTheDoesSomething.key == "FlagTheDoesSomething")

        let store = SettingsStore.inMemory()
        store["username"] = "derek"
        #expect(store["username"]?.stringValue == "derek")
    }

    @Test func migratingFromPalau() {
        let defaults = Guide.Defaults()
        defaults.name = "I am a great String value!"
        #expect(defaults.name == "I am a great String value!")
        defaults.name = nil
        #expect(defaults.$name.isSet == false)
        #expect(defaults.intValueMin10 == 10)
        defaults.intValueMin10 = 8
        #expect(defaults.intValueMin10 == 10)
        defaults.intValueMin10 = 11
        #expect(defaults.intValueMin10 == 11)
        let printed = Received<String>()
        let observation = defaults.$strings.onChange { new, old in printed.append("changed to: \(new) from: \(old)") }
        defaults.strings = ["a"]
        #expect(printed.all == [#"changed to: ["a"] from: []"#])
        _ = observation
    }
}
