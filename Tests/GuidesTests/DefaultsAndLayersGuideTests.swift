import Foundation
import Settings
import SettingsTestSupport
import Testing

/// The samples of Docs/DefaultsAndLayers.md, run.
@Suite("Guide: Defaults and layers")
struct DefaultsAndLayersGuideTests {
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
