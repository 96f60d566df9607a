import Foundation
import Observation
import Settings
import Testing
import SettingsTestSupport

// The samples of Docs/Observing.md (and the settings Docs/Persistence.md shares), compiled and run.

struct ObservingGuideSettings {
    @Setting var volume: Double
    @Setting var theme: String
    init(store: SettingsStore) {
        _volume = Setting("volume", default: 0.5, store: store)
        _theme = Setting("theme", default: "system", store: store)
    }
}

@Suite("Guide: Observing")
struct ObservingGuideTests {
    @Test func didSetStyleCallback() {
        let settings = ObservingGuideSettings(store: .inMemory())
        let printed = Received<String>()
        let observation = settings.$volume.onChange { new, old in
            printed.append("volume \(old) -> \(new)")
        }
        settings.volume = 0.8
        observation.cancel()
        settings.volume = 0.1
        #expect(printed.all == ["volume 0.5 -> 0.8"])
    }

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
