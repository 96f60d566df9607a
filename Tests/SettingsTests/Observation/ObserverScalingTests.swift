import Foundation
@testable import Settings
import Synchronization
import Testing
import SettingsTestSupport

/// The cost of observers grows with the observers of the key written, not with all of them, and
/// an unread change sequence holds bounded memory.
@Suite("Observer scaling")
struct ObserverScalingTests {
    /// The least CPU time of three runs of `body` on this thread (CPU time, not the wall clock:
    /// a busy machine does not change it; see Support/Growth.swift).
    private static func fastest(_ body: () -> Void) -> Double {
        (0..<3).map { _ in cpuTime(body) }.min() ?? 0
    }

    private static func observe(_ store: SettingsStore, count: Int) -> [SettingsObservation] {
        (0..<count).map { i in store.onChange(of: SettingsKey("observed/k\(i)")) { (_: PlistValue?, _: PlistValue?) in } }
    }

    @Test func aWriteCostsTheObserversOfItsKeyNotAllObservers() async {
        // Two sizes in one run: 100x the observers of other keys must not make a write 100x dearer.
        // (Measured on a thread of its own: the other tests' tasks keep the cooperative pool.)
        @Sendable func perWrite(observers: Int) -> Double {
            let store = SettingsStore.inMemory()
            let observations = Self.observe(store, count: observers)
            defer { withExtendedLifetime(observations) {} }
            var i = 0
            return Self.fastest {
                for _ in 0..<200 {
                    i += 1
                    store["unobserved"] = .integer(PlistInteger(Int64(i)))
                }
            }
        }
        let (small, large) = await offThePool { (perWrite(observers: 1_000), perWrite(observers: 100_000)) }
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
        let observations = named + Self.observe(store, count: 1_000)
        store["Network/timeout"] = 30
        #expect(heard.locked { $0 } == ["Network", "Network/timeout"])
        heard.locked { $0 = [] }
        store["Network"] = ["proxy": ["host": "example.org"]]
        #expect(heard.locked { $0 } == ["Network", "Network/timeout", "Network/proxy/host"])
        withExtendedLifetime(observations) {}
    }

    @Test func droppingObserversCostsTheSameEachAtAnyCount() async {
        // Removing n observers: linear, so 10x the observers costs about 10x (more with cache misses), not 100x.
        @Sendable func dropping(_ count: Int) -> Double {
            (0..<3).map { _ in
                let store = SettingsStore.inMemory()
                var observations = Self.observe(store, count: count)
                return cpuTime { observations.removeAll() }
            }.min() ?? 0
        }
        let (small, large) = await offThePool { (dropping(10_000), dropping(100_000)) }
        #expect(large < small * 50, "10,000 observers: \(small), 100,000: \(large)")
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
            #expect(store.values.observers.count == 1)
        }
        #expect(store.values.observers.count == 0)
    }
}
