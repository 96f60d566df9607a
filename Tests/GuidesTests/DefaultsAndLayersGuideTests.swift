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
        // What the samples left in the guide's `store`, as its comments say.
        let store = sharedStoreOfDefaultsAndLayers
        #expect(store["API/host"] == "staging.example.com")
        #expect(store.source(of: "API/host") == .overrides)
        #expect(store["API/port"] == 443)
        #expect(store.source(of: "API/port") == .defaults)
        #expect(store["Network/timeout"] == 5)
        #expect(store.source(of: "Network/timeout") == .volatile)
        #expect(store["autoPlay"] == true)   // Defaults.plist's, over the default registered in code
        // The schema, written beside the shared store's file.
        let shared = try #require(SettingsStore.shared.url)
        let schema = shared.deletingLastPathComponent().appending(path: ".settings.plist.meta/schema.json")
        #expect(try String(contentsOf: schema, encoding: .utf8).contains(#""title": "Preferences""#))
    }

    // The samples apply this process's own arguments and environment, so what the guide's comments
    // say of their forms (`myapp -Network/timeout 5`, `MYAPP_Network__timeout=5`) is checked here.
    @Test func argumentsAndEnvironmentForms() {
        let store = SettingsStore.inMemory()
        store.applyArguments(["myapp", "-Network/timeout", "7", "-verbose", "YES"])
        #expect(store["Network/timeout"] == 7)
        #expect(store.source(of: "Network/timeout") == .volatile)
        #expect(store["verbose"] == true)
        _ = store.applyEnvironment(prefix: "MYAPP", ["MYAPP_Network__retries": "3"])
        #expect(store["Network/retries"] == 3)
    }
}
}
