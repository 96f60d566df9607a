import Dispatch
import Foundation
import Observation
@testable import Settings  // Mutex.locked: visible to ThreadSanitizer in SETTINGS_TSAN builds
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

struct ObservedSettings {
    @Setting var volume: Double
    @Setting var theme: String
    @Setting var proxy: String?
    init(store: SettingsStore) {
        _volume = Setting("Audio/volume", default: 0.5, store: store)
        _theme = Setting("theme", default: "system", store: store)
        _proxy = Setting("Network/proxy", store: store)
    }
}

@Suite("Observation")
struct ObservationTests {
    @Test func settingCallbackGetsNewAndOldValue() {
        let store = SettingsStore.inMemory()
        let settings = ObservedSettings(store: store)
        let got = Received<(Double, Double)>()
        let observation = settings.$volume.onChange { new, old in got.append((new, old)) }
        settings.volume = 0.8
        settings.volume = 0.8       // same value: nothing
        settings.volume = 0.2
        #expect(got.all.map(\.0) == [0.8, 0.2])
        #expect(got.all.map(\.1) == [0.5, 0.8])
        observation.cancel()
        settings.volume = 0.9
        #expect(got.all.count == 2)
    }

    @Test func droppingTheObservationStopsCallbacksAndFreesTheHandler() {
        let store = SettingsStore.inMemory()
        let settings = ObservedSettings(store: store)
        final class Witness: Sendable {}
        weak var weakWitness: Witness?
        let got = Received<Double>()
        do {
            let witness = Witness()
            weakWitness = witness
            let observation = settings.$volume.onChange { new, _ in withExtendedLifetime(witness) { got.append(new) } }
            settings.volume = 1
            _ = observation
        }
        settings.volume = 0
        #expect(got.all == [1])
        #expect(weakWitness == nil)
    }

    @Test func everySourceIsDeliveredButOnlyEffectiveChanges() throws {
        let store = SettingsStore.inMemory()
        let changes = Received<SettingsChange>()
        let observation = store.onChange { changes.append($0) }
        defer { observation.cancel() }

        store.register(defaults: ["theme": "light"])                 // effective: system -> light
        store["theme"] = "dark"                                       // write
        store.addOverrides(["theme": "dark"])                         // same effective value: nothing
        store.addOverrides(["theme": "blue"])                         // overrides
        store["theme"] = "green"                                      // hidden by the override: nothing
        store.setVolatile("red", for: "theme")                        // volatile
        store.register(defaults: ["theme": "ignored", "fresh": 1])    // only 'fresh' changes
        store.removeAllUserValues()                                   // hidden: nothing
        #expect(changes.all.map(\.origin) == [.defaults, .write, .overrides, .volatile, .defaults])
        #expect(changes.all.map { $0.keys.map(\.path) } == [["theme"], ["theme"], ["theme"], ["theme"], ["fresh"]])
    }

    @Test func resetIsDeliveredWithTheDefault() {
        let store = SettingsStore.inMemory()
        let settings = ObservedSettings(store: store)
        settings.theme = "dark"
        let got = Received<(String, String)>()
        let observation = settings.$theme.onChange { new, old in got.append((new, old)) }
        settings.$theme.reset()
        #expect(got.all.map(\.0) == ["system"])
        #expect(got.all.map(\.1) == ["dark"])
        _ = observation
    }

    @Test func namespaceObserverSeesChangesBelowIt() {
        let store = SettingsStore.inMemory()
        let got = Received<PlistValue?>()
        let observation = store.onChange(of: "Network") { new, _ in got.append(new) }
        store["Network/proxy"] = "p"
        store["Other"] = 1
        store["Network/port"] = 8080
        #expect(got.all == [["proxy": "p"], ["proxy": "p", "port": 8080]])
        _ = observation
    }

    @Test func callbacksMayReadAndWriteSettingsWithoutDeadlock() {
        let store = SettingsStore.inMemory()
        let settings = ObservedSettings(store: store)
        let got = Received<String>()
        // The callback writes another setting and reads both: it must not run under a lock.
        let a = settings.$volume.onChange { new, _ in
            settings.theme = new > 0.7 ? "loud" : "quiet"
            got.append("volume \(settings.volume) theme \(settings.theme)")
        }
        let b = settings.$theme.onChange { new, _ in
            got.append("theme \(new)")
            if new == "loud" { settings.volume = 0.7 }   // re-entrant write: queued, not nested
        }
        settings.volume = 0.9
        #expect(got.all == ["volume 0.9 theme loud", "theme loud", "volume 0.7 theme quiet", "theme quiet"])
        _ = (a, b)
    }

    @Test func asyncValuesStartWithTheCurrentValue() async {
        let store = SettingsStore.inMemory()
        let settings = ObservedSettings(store: store)
        var iterator = settings.$theme.values().makeAsyncIterator()
        settings.theme = "dark"
        settings.theme = "dark"
        settings.$theme.reset()
        #expect(await iterator.next() == "system")
        #expect(await iterator.next() == "dark")
        #expect(await iterator.next() == "system")
    }

    @Test func asyncStoreChangesListKeys() async {
        let store = SettingsStore.inMemory()
        var iterator = store.changes.makeAsyncIterator()
        store["a"] = 1
        store.register(defaults: ["b": ["c": 2, "d": 3]])
        let first = await iterator.next()
        let second = await iterator.next()
        #expect(first == SettingsChange(keys: ["a"], origin: .write))
        #expect(second?.keys == ["b"])   // a whole namespace appeared
        #expect(first?.description == "write: a")
    }

    @Test func storeValuesSequenceOptionallySkipsTheCurrentValue() async {
        let store = SettingsStore.inMemory(["n": 1])
        var iterator = store.values(for: "n", initial: false).makeAsyncIterator()
        store["n"] = 2
        #expect(await iterator.next() == .some(2))
    }

    @Test func observationFrameworkTracksSettings() {
        let store = SettingsStore.inMemory()
        let settings = ObservedSettings(store: store)
        let fired = Received<String>()
        withObservationTracking {
            _ = settings.volume
        } onChange: {
            fired.append("volume")
        }
        settings.volume = 0.6
        withObservationTracking {
            _ = settings.volume
        } onChange: {
            fired.append("volume")
        }
        #expect(fired.all == ["volume"])   // the first tracking fired once, and is over
        settings.theme = "dark"            // not tracked
        settings.volume = 0.6              // no change
        #expect(fired.all == ["volume"])
        settings.$volume.reset()
        #expect(fired.all == ["volume", "volume"])
    }

    @Test func manyTasksWriteWhileObserversRun() async {
        let store = SettingsStore.inMemory()
        let settings = ObservedSettings(store: store)
        let seen = Received<Double>()
        let changes = Received<SettingsChange>()
        let a = settings.$volume.onChange { new, _ in seen.append(new); _ = settings.theme }
        let b = store.onChange { changes.append($0) }
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for i in 1...200 {
                        settings.volume = Double(task * 1000 + i)
                        _ = settings.volume
                        if i % 50 == 0 { settings.theme = "t\(task)-\(i)" }
                    }
                }
            }
        }
        // Every delivered value differs from the one before it, and the last one is current.
        let values = seen.all
        #expect(!values.isEmpty)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 != $1 })
        #expect(values.last == settings.volume)
        #expect(changes.all.count >= values.count)
        _ = (a, b)
    }

    @Test func anObserverRegisteredDuringAWriteNeverMissesIt() throws {
        let store = SettingsStore.inMemory()
        var missed = 0
        for i in 0..<3000 {
            let key = SettingsKey("race\(i)")
            let olds = Mutex<[PlistValue?]>([])
            let observation = Mutex<SettingsObservation?>(nil)
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    store[key] = 1
                } else {
                    let o = store.onChange(of: key) { _, old in olds.locked { $0.append(old) } }
                    observation.locked { $0 = o }
                }
            }
            store[key] = 2  // after both: the observer must know the value was 1
            if olds.locked({ $0.last }) != .some(1) { missed += 1 }
            observation.locked { $0?.cancel() }
        }
        #expect(missed == 0)
    }
}
