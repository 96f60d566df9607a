import Foundation
import Settings
import SettingsTestSupport
import Testing

/// Docs/Settings.md: its samples run as written, and the rules' effects (the guide declares the
/// rule-bound settings and shows no read of them) checked by hand.
extension GuideSuites {
@Suite("Guide: Settings")
struct SettingsGuideTests {
    @Test func samplesRunAsWritten() async throws {
        let samples = try #require(samplesOfSettings.count == 3 ? samplesOfSettings : nil, "the guide's samples changed: update this test")
        let run = try await GuideRun.run(setUp: { dir in
            try PlistValue.dictionary(["Network": ["timeout": 30.0]]).write(to: dir.file("Defaults.plist"))
            try PlistValue.dictionary(["Network": ["timeout": 12.0]]).write(to: dir.file("Target.plist"))
        }) {
            try await samples[0]()
            try await samples[1]()
            // The Options API sample ends with a key the store lacks: it throws, as the guide says.
            let error = await #expect(throws: SettingsError.self) { try await samples[2]() }
            #expect(error?.code == .missingKey)
            #expect(error.map { "\($0)" }?.contains("no value for key 'Server/port' (there is no namespace 'Server')") == true,
                    "\(String(describing: error))")
        }
        #expect(run.printed.contains("Sync/apiToken = <redacted> (from the default in code)\n"), "\(run.printed)")
        #expect(sharedStoreOfSettings["Network/timeout"] == 12.0)   // store[.timeout] = 12, a Double key
    }

    // The guide declares the rule-bound settings in a sample and reads none of them back.
    @Test func rulesSamplesBehaveAsDocumented() {
        let store = SettingsStore.inMemory()
        let settings = SettingsStore.bind(ReadmeSettings(), to: store)
        #expect(settings.retries == 3)
        settings.retries = 0
        #expect(settings.retries == 1)
        settings.volume = 7
        #expect(settings.volume == 1)
    }
}
}
