import Foundation
import Settings
import SettingsTestSupport
import Testing

/// The samples of Docs/GettingStarted.md, run.
@Suite("Guide: Getting started")
struct GettingStartedGuideTests {
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
}
