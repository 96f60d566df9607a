import Foundation
import Settings
import SettingsTestSupport
import Testing

// The settings the hand-written checks of Docs/Observing.md use.

struct ObservingGuideSettings {
    @Setting var volume: Double
    @Setting var theme: String
    init(store: SettingsStore) {
        _volume = Setting("volume", default: 0.5, store: store)
        _theme = Setting("theme", default: "system", store: store)
    }
}

/// Docs/Observing.md: its samples run as written, and what they cannot show (their observers log
/// into a function that does nothing) checked by hand.
extension GuideSuites {
@Suite("Guide: Observing")
struct ObservingGuideTests {
    // MARK: - The guide's own samples, run
    // The samples of Docs/Observing.md, run in the guide's order as a reader who copies them into one
    // program runs them: every one ends (no `for await` waits for ever), and they print the same on
    // every run (the first sample's store is a fresh one, not a file a previous run wrote).

    @Test(.timeLimit(hangLimit))  // a hang ends the run; a busy machine (the whole suite on 2 cores) does not
    func observingSamplesEndAndSayTheSameOnEveryRun() async throws {
        let run = try await GuideRun.run {
            for sample in samplesOfObserving { try await sample() }
            // The first sample again, as a second run of a program that copied it.
            try await samplesOfObserving[0]()
        }
        let lines = run.printed.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0 == "volume 0.5 -> 0.8" }.count == 2, "\(run.printed)")
        #expect(lines.contains("write [theme]"), "\(run.printed)")
        #expect(lines.contains("Optional(45)"), "\(run.printed)")
        #expect(sharedStoreOfObserving["theme"] == "sepia")   // "another part of the program changes them"
    }

    // MARK: - What the samples cannot show
    // The guide's observers of a set and of a namespace hand what they see to `log`, which the guide
    // leaves empty: these check what they would log.

    @Test func observationsKeptInASet() {
        let store = SettingsStore.inMemory()
        let settings = ObservingGuideSettings(store: store)
        var observations = Set<SettingsObservation>()
        let seen = Received<String>()
        settings.$theme.onChange { new, _ in seen.append(new) }.store(in: &observations)
        store.onChange { seen.append("\($0)") }.store(in: &observations)
        settings.theme = "dark"
        #expect(Set(seen.all) == ["dark", "write: theme"])
        observations.removeAll()
        settings.theme = "light"
        #expect(seen.all.count == 2)
    }

    @Test func namespaceObserverAndAffects() {
        let store = SettingsStore.inMemory()
        let changes = Received<SettingsChange>()
        let all = store.onChange { changes.append($0) }
        store["Network/timeout"] = 5
        #expect(changes.all.first?.affects("Network") == true)
        #expect(changes.all.first?.affects("Network/timeout") == true)
        #expect(changes.all.first?.affects("theme") == false)
        _ = all
    }
}
}
