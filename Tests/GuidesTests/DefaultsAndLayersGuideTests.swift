import Foundation
import Settings
import SettingsTestSupport
import Testing

extension GuideSuites {
/// Docs/DefaultsAndLayers.md: its samples run as written, and the layers they set read back.
@Suite("Guide: Defaults and layers")
struct DefaultsAndLayersGuideTests {
    @Test func samplesRunAsWritten() async throws {
        let run = try await GuideRun.run(setUp: { dir in
            try PlistValue.dictionary(["autoPlay": true, "Network": ["timeout": 30.0]]).write(to: dir.file("Defaults.plist"))
            try PlistValue.dictionary(["API": ["host": "example.com", "port": 443]]).write(to: dir.file("Options.plist"))
            try PlistValue.dictionary(["API": ["host": "staging.example.com"]]).write(to: dir.file("Staging.plist"))
        }) {
            for sample in samplesOfDefaultsAndLayers { try await sample() }
        }
        // `explain`, printed as the guide shows it.
        #expect(run.printed.contains("""
            Network/timeout = 5 (from volatile: set in code)
            * volatile   set in code: 5
              overrides  none registered: not set
              user       in memory: 60
              defaults   in code: 30
            """), "\(run.printed)")
        // The schema, written beside the shared store's file.
        let shared = try #require(SettingsStore.shared.url)
        let schema = shared.deletingLastPathComponent().appending(path: ".settings.plist.meta/schema.json")
        #expect(try String(contentsOf: schema, encoding: .utf8).contains(#""title": "Preferences""#))
    }

    // What the samples leave in local constants (the guide shows them as comments), read back.
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
}
}
