import Foundation
@testable import Settings
import Synchronization
import Testing

/// The cost of observers grows with the observers of the key written, not with all of them, and
/// an unread change sequence holds bounded memory.
@Suite("Observer scaling")
struct ObserverScalingTests {
    /// The fastest of five runs of `body` (the least disturbed by the rest of the machine).
    private func fastest(_ body: () -> Void) -> Duration {
        (0..<5).map { _ in ContinuousClock().measure(body) }.min() ?? .zero
    }

    private func observe(_ store: SettingsStore, count: Int) -> [SettingsObservation] {
        (0..<count).map { i in store.onChange(of: SettingsKey("observed/k\(i)")) { (_: PlistValue?, _: PlistValue?) in } }
    }

    @Test func aWriteCostsTheObserversOfItsKeyNotAllObservers() {
        // Two sizes in one run: 100x the observers of other keys must not make a write 100x dearer.
        func perWrite(observers: Int) -> Duration {
            let store = SettingsStore.inMemory()
            let observations = observe(store, count: observers)
            defer { withExtendedLifetime(observations) {} }
            var i = 0
            return fastest {
                for _ in 0..<200 {
                    i += 1
                    store["unobserved"] = .integer(PlistInteger(Int64(i)))
                }
            }
        }
        let small = perWrite(observers: 1_000)
        let large = perWrite(observers: 100_000)
        #expect(large < small * 10, "200 writes: \(small) with 1,000 observers, \(large) with 100,000")
    }

    @Test func keyObserversStillHearTheirKeysNamespacesAndChildren() {
        let store = SettingsStore.inMemory()
        let heard = Mutex<[String]>([])
        let named: [SettingsObservation] = [
            store.onChange(of: "Network") { (_: PlistValue?, _: PlistValue?) in heard.locked { $0.append("Network") } },
            store.onChange(of: "Network/timeout") { (_: PlistValue?, _: PlistValue?) in heard.locked { $0.append("Network/timeout") } },
            store.onChange(of: "Network/proxy/host") { (_: PlistValue?, _: PlistValue?) in heard.locked { $0.append("Network/proxy/host") } },
            store.onChange(of: "Other") { (_: PlistValue?, _: PlistValue?) in heard.locked { $0.append("Other") } },
        ]
        let observations = named + observe(store, count: 1_000)
        store["Network/timeout"] = 30
        #expect(heard.locked { $0 } == ["Network", "Network/timeout"])
        heard.locked { $0 = [] }
        store["Network"] = ["proxy": ["host": "example.org"]]
        #expect(heard.locked { $0 } == ["Network", "Network/timeout", "Network/proxy/host"])
        withExtendedLifetime(observations) {}
    }

    @Test func droppingObserversCostsTheSameEachAtAnyCount() {
        // Removing n observers: linear, so 10x the observers costs about 10x, not 100x.
        func dropping(_ count: Int) -> Duration {
            (0..<3).map { _ in
                let store = SettingsStore.inMemory()
                var observations = observe(store, count: count)
                return ContinuousClock().measure { observations.removeAll() }
            }.min() ?? .zero
        }
        let small = dropping(10_000)
        let large = dropping(100_000)
        #expect(large < small * 30, "10,000 observers: \(small), 100,000: \(large)")
    }

    @Test func anUnreadChangeSequenceKeepsOnlyItsLimitAndSaysWhatItDropped() async {
        let store = SettingsStore.inMemory()
        let changes = store.changes(bufferingNewest: 4)
        for i in 0..<10_000 { store[SettingsKey("k\(i % 100)")] = .integer(PlistInteger(Int64(i))) }
        var iterator = changes.makeAsyncIterator()
        let overflow = await iterator.next()
        #expect(overflow?.origin == .overflow)
        #expect(overflow?.keys.count == 100)   // every key the dropped changes named, once
        var rest: [SettingsChange] = []
        for _ in 0..<4 { if let change = await iterator.next() { rest.append(change) } }
        let newest: [[SettingsKey]] = [["k96"], ["k97"], ["k98"], ["k99"]]
        #expect(rest.map(\.keys) == newest)   // the newest four
    }

    @Test func theDefaultChangeSequenceIsBounded() async {
        let store = SettingsStore.inMemory()
        let changes = store.changes
        for i in 0..<5_000 { store["k"] = .integer(PlistInteger(Int64(i))) }
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next()?.origin == .overflow)
        var count = 0
        while count < 1_024, await iterator.next() != nil { count += 1 }
        #expect(count == 1_024)
    }

    @Test func aSequenceCreatedBeforeItsTaskStartsMissesNothing() async {
        let store = SettingsStore.inMemory()
        let changes = store.changes            // observing from here
        let consumer = Task {
            var seen: [SettingsKey] = []
            for await change in changes {
                seen += change.keys
                if seen.count == 3 { break }
            }
            return seen
        }
        store["a"] = 1                         // before the task has run
        store["b"] = 2
        store["c"] = 3
        let expected: [SettingsKey] = ["a", "b", "c"]
        #expect(await consumer.value == expected)
    }

    @Test func droppingAnUnreadSequenceStopsObserving() {
        let store = SettingsStore.inMemory()
        do {
            let changes = store.changes
            _ = changes
            #expect(store.observers.count == 1)
        }
        #expect(store.observers.count == 0)
    }
}
