import Foundation
import Settings
import Testing
import SettingsTestSupport

// Hand-written copies of guide types, for the checks their samples cannot show (the samples keep
// what they read in local constants): Docs/TypesAndTransformers.md's and Docs/Migrating.md's.
// They name stores of their own, never `SettingsStore.shared` (see GuideRun).

enum Guide {
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
        @Setting(store: .inMemory()) var lastUpdate: Date?   // key-less and optional
    }
    struct MYModelClass: SettingsModel {
        @Archived var backgroundColor = SettingsColor(hex: "#FFFFFF")!
        @Archived var brightness: Float = 1
        @Archived var someURL = URL(string: "https://example.com")!
        var propertyThatWontBeArchived = ""
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

extension GuideSuites {
@Suite("Guide: Migrating")
struct MigratingGuideTests {
    // The guide's samples, run as written; the checks below it read back, on copies, values the
    // samples keep in local constants (the guide shows them as comments).
    @Test func samplesRunAsWritten() async throws {
        let run = try await GuideRun.run(setUp: { dir in
            try PlistValue.dictionary(["volume": 0.3, "lastTrack": "Outro"]).write(to: dir.file("com.example.player.plist"))
            try PlistValue.dictionary(["AutoPlayVoiceOver": true, "LoginTimeoutInterval": 30.0]).write(to: dir.file("Defaults.plist"))
            try PlistValue.dictionary(["My boolean": true, "Root": ["Sub": ["Key": "Value"]]]).write(to: dir.file("Options.plist"))
            try PlistValue.dictionary(["Root": ["Sub": ["Key": "Value"]]]).write(to: dir.file("DefaultOptions.plist"))
            try PlistValue.dictionary(["Root": ["Sub": ["Another key": "Target value"]]]).write(to: dir.file("TargetOptions.plist"))
            try FileManager.default.createDirectory(at: dir.file("Settings.bundle"), withIntermediateDirectories: true)
            try PlistValue.dictionary(["PreferenceSpecifiers": [["Type": "PSToggleSwitchSpecifier", "Key": "autoUpdate", "DefaultValue": true]]])
                .write(to: dir.file("Settings.bundle/Root.plist"))
        }) {
            // Its warnings on standard error whichever handler other suites put in place meanwhile.
            sharedStoreOfMigrating.diagnosticsHandler = SettingsDiagnostics.standardError
            for sample in samplesOfMigrating { try await sample() }
        }
        #expect(run.printed.contains("redraw\n"), "\(run.printed)")   // the @AppStorage sample
        // MFDynamic: the key-less optional has no default anywhere, and is reported.
        #expect(run.warned.contains("'LastUpdate'"), "\(run.warned)")
        // MFDynamic and PSTSettings bind to SettingsStore.shared: first letter capitalised.
        #expect(run.shared?["AutoPlayVoiceOver"] == true)
        #expect(run.shared?["FlagTheDoesSomething"] == true)
        // MFDynamicStorage: only the @Archived properties are in the file.
        #expect(try run.file("Model.plist") == ["backgroundColor": "#FFFFFF", "brightness": 1.0, "someURL": "https://example.com"])
        // The guide's `store`: Settings.bundle's default read, then "clear everything" (Palau).
        #expect(sharedStoreOfMigrating["autoUpdate"] == true)
        #expect(sharedStoreOfMigrating.source(of: "autoUpdate") == .defaults)
        #expect(sharedStoreOfMigrating["username"] == nil)
    }

    // What the samples do not do: a date written to the key-less setting, a model with a
    // non-archived property set, then loaded.
    @Test func migratingFromMFDynamic() throws {
        let defaults = SettingsStore.bind(Guide.MYAppDefaults(), to: .inMemory())
        defaults.autoPlayVoiceOver = true
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
    }

    // The TFOptionsKit samples read into local constants: these are the values the guide names.
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

    // The Palau samples set and read locals, and their observer sees no change: checked here.
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
}
