#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import Settings
import SettingsTestSupport

struct ProxySettings: SettingsGroup {
    @Setting("Defaults.check/Network/proxy", store: .inMemory()) var proxy: String?
    @Setting("Defaults.check/Network/port", default: 8080, store: .inMemory()) var port: Int
}

struct CheckedSettings {
    @Setting("Defaults.check/name", default: "Ada", store: .inMemory()) var name: String
    @Setting("Defaults.check/volume", store: .inMemory()) var volume: Double?
    @Setting("Defaults.check/theme", store: .inMemory()) var theme: String?
    @Setting("Defaults.check/legacy", store: .inMemory(), warnsWhenDefaultIsMissing: false) var legacy: Bool?
    @ReadOnlySetting("Defaults.check/build", store: .inMemory()) var build: Int?
    var network = ProxySettings()
    var notASetting = 3
}

struct KeylessCheckedSettings {
    @Setting(store: .inMemory()) var defaultsCheckKeyless: String?
}

struct MissingDefaultWarningTests {
    @Test func optionalSettingsWithoutARegisteredDefaultAreReportedExactly() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let settings = CheckedSettings()
        let warnings = store.registerDefaults(["Defaults.check": ["volume": 0.5]], checking: settings)
        #expect(warnings.map(\.message) == [
            "setting 'Defaults.check/theme' (String?, CheckedSettings.theme) has no default in code or in the registered defaults",
            "setting 'Defaults.check/build' (Int?, CheckedSettings.build) has no default in code or in the registered defaults",
            "setting 'Defaults.check/Network/proxy' (String?, CheckedSettings.network.proxy) has no default in code or in the registered defaults",
        ])
        #expect(warnings.map(\.kind) == [.missingDefault, .missingDefault, .missingDefault])
        #expect(warnings.map(\.key) == ["Defaults.check/theme", "Defaults.check/build", "Defaults.check/Network/proxy"])
        #expect(warnings.first?.description == "warning: " + (warnings.first?.message ?? ""))
        // Standard error gets it after the program's name, not the library's.
        #expect(SettingsDiagnostics.standardErrorLine(warnings[0]) == "\(ProcessInfo.processInfo.processName): warning: " + warnings[0].message)
        #expect(!SettingsDiagnostics.standardErrorLine(warnings[0]).hasPrefix("settings:"))
        // Every warning also went to the handler (other tests use other keys).
        #expect(DiagnosticsRecorder.diagnostics(for: "Defaults.check/theme").contains(warnings[0]))
        #expect(DiagnosticsRecorder.diagnostics(for: "Defaults.check/Network/proxy").contains(warnings[2]))
    }

    @Test func everyRegistrationSoFarCountsAndTheFileIsNamed() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Defaults.plist", """
            <dict><key>Defaults.check</key><dict>
                <key>theme</key><string>dark</string>
                <key>Network</key><dict><key>proxy</key><string>none</string></dict>
            </dict></dict>
            """)
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Defaults.check": ["volume": 1.0]])
        let warnings = try store.registerDefaults(contentsOf: url, checking: CheckedSettings())
        #expect(warnings.map(\.message) == [
            "setting 'Defaults.check/build' (Int?, CheckedSettings.build) has no default in code or in Defaults.plist",
        ])
        store.register(defaults: ["Defaults.check": ["build": 1]])
        #expect(store.registerDefaults([:], checking: CheckedSettings()).isEmpty)
    }

    @Test func aUserValueIsNotADefault() {
        let store = SettingsStore.inMemory(["Defaults.check": ["theme": "light", "volume": 1.0, "build": 2, "Network": ["proxy": "p"]]])
        let warnings = store.registerDefaults([:], checking: CheckedSettings())
        #expect(warnings.map(\.key) == ["Defaults.check/volume", "Defaults.check/theme", "Defaults.check/build", "Defaults.check/Network/proxy"])
    }

    @Test func keylessSettingsAreBoundToTheirDerivedKeysFirst() {
        let store = SettingsStore.inMemory()
        let settings = KeylessCheckedSettings()
        #expect(settings.$defaultsCheckKeyless.key == nil)
        let warnings = store.registerDefaults([:], checking: settings)
        #expect(settings.$defaultsCheckKeyless.key == "DefaultsCheckKeyless")
        #expect(warnings.map(\.message) == [
            "setting 'DefaultsCheckKeyless' (String?, KeylessCheckedSettings.defaultsCheckKeyless) has no default in code or in the registered defaults",
        ])
        #expect(store.registerDefaults(["DefaultsCheckKeyless": "x"], checking: settings).isEmpty)
    }

    @Test func aSettingsBundleIsNamedByItsRootFile() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", """
            <dict><key>PreferenceSpecifiers</key><array>
                <dict><key>Key</key><string>DefaultsCheckKeyless</string><key>DefaultValue</key><string>x</string></dict>
            </array></dict>
            """)
        let store = SettingsStore.inMemory()
        let warnings = try store.registerDefaults(contentsOf: url, checking: CheckedSettings())
        #expect(warnings.first?.message == "setting 'Defaults.check/volume' (Double?, CheckedSettings.volume) has no default in code or in Root.plist")
        #expect(warnings.count == 4)
        #expect(try store.registerDefaults(contentsOf: url, checking: KeylessCheckedSettings()).isEmpty)
    }

    @Test func aCustomTypeIsNamedByItsTransformer() {
        struct Celsius: SettingsValue, Sendable {
            var degrees: Double
            static var settingsTransformer: SettingsTransformer<Celsius> {
                SettingsTransformer(typeName: "Celsius", encode: { .real($0.degrees) }, decode: { $0.doubleValue.map(Celsius.init) })
            }
        }
        struct Weather { @Setting("Defaults.check/outside", store: .inMemory()) var outside: Celsius? }
        let store = SettingsStore.inMemory()
        #expect(store.registerDefaults([:], checking: Weather()).map(\.message) == [
            "setting 'Defaults.check/outside' (Celsius?, Weather.outside) has no default in code or in the registered defaults",
        ])
    }
}
