import Foundation
import Settings
import SettingsTestSupport
import Testing

/// The samples of Docs/Settings.md, run.
@Suite("Guide: Settings")
struct SettingsGuideTests {
    @Test func rulesSamplesBehaveAsDocumented() {
        let store = SettingsStore.inMemory()
        let settings = SettingsStore.bind(ReadmeSettings(), to: store)
        #expect(settings.retries == 3)
        settings.retries = 0
        #expect(settings.retries == 1)
        settings.volume = 7
        #expect(settings.volume == 1)
    }

    @Test func settingsGuideLayerSample() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Network": ["timeout": 30]])
        store["Network/timeout"] = 60
        #expect(store.source(of: "Network/timeout") == .user)
        store.removeValue(for: "Network/timeout")
        #expect(store["Network/timeout"] == 30)
    }
}
