import Dispatch
import Foundation
@testable import Settings
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where and when a file store does its work: on its own thread, lazily, in linear time.
@Suite("PersistenceExecutor")
struct PersistenceExecutorTests {
    @Test func persistenceRunsOnTheStoresOwnThread() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let onExecutor = Mutex<[Bool]>([])
        let executor = try #require(store.backend).executor
        store.diagnosticsHandler = { _ in onExecutor.locked { $0.append(executor.isCurrent) } }
        try Data("garbage".utf8).write(to: dir.file())
        _ = store["a"]                                     // the load runs on the executor and reports there
        store["b"] = 1
        try await store.flush()
        #expect(onExecutor.locked { $0 } == [true, true])
        #expect(!executor.isCurrent)
    }

    @Test(.timeLimit(hangLimit)) func manyDistinctChangedKeysAreTrackedInLinearTime() async throws {
        // Quadratic tracking took 158 s for 40,000 keys: 10x the keys must cost about 10x, not 100x.
        // (The tracking is done by the writes, on the writing thread.)
        let dir = try TemporaryDirectory()
        var stores: [SettingsStore] = []
        let ratio = growth(from: 4_000, to: 40_000) { count in
            let store = SettingsStore.file(dir.file("\(stores.count).plist"), autosaveDelay: nil, externalChanges: .ignored)
            stores.append(store)
            for i in 0..<count { store[SettingsKey("key\(i)")] = .integer(PlistInteger(Int64(i))) }
        }
        #expect(isLinear(ratio, from: 4_000, to: 40_000), "10x the keys cost \(ratio)x the time")
        let last = try #require(stores.last)
        try await last.flush()
        #expect(try PlistValue(contentsOf: dir.file("\(stores.count - 1).plist")).dictionaryValue?.count == 40_000)
        for store in stores.dropLast() { try await store.flush() }
        // Repeated keys are still compacted.
        var state = UnsavedChanges()
        state.tracksChanges = true
        for i in 0..<100_000 { _ = state.markDirty(SettingsKey("k\(i % 10)")) }
        #expect(state.dirty.count < 4096)
    }

    @Test func creatingAFileStoreDoesNoIO() throws {
        let dir = try TemporaryDirectory()
        try Data("garbage".utf8).write(to: dir.file())
        let store = SettingsStore.file(dir.file())
        let diagnostics = StoreDiagnostics(store)
        let loadedBefore = store.loaded.load(ordering: .acquiring)
        #expect(!loadedBefore)
        #expect(diagnostics.messages.isEmpty)
        _ = store["a"]
        let loadedAfter = store.loaded.load(ordering: .acquiring)
        #expect(loadedAfter)
        #expect(diagnostics.messages.count == 1)
    }

    @Test(.timeLimit(hangLimit)) func blocksRunOneAtATimeInOrderWhetherTheCallerOrTheThreadRunsThem() throws {
        // `run` lets its caller run the block itself when the executor's thread waits idle:
        // blocks still never overlap, every one is isolated, and work queued meanwhile waits.
        let executor = PersistenceExecutor()
        defer { executor.stop() }
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let notIsolated = Atomic<Int>(0)
        let ran = Atomic<Int>(0)
        @Sendable func work() {
            if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
            if !executor.isCurrent { notIsolated.add(1, ordering: .relaxed) }
            ran.add(1, ordering: .relaxed)
            inside.subtract(1, ordering: .acquiringAndReleasing)
        }
        let threads = 4, rounds = 300
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<rounds {
                if (i + t) % 3 == 0 { executor.submit(work) } else { executor.run(work) }
            }
        }
        executor.runAndWait {}  // everything submitted before this has run
        #expect(ran.load(ordering: .relaxed) == threads * rounds)
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(notIsolated.load(ordering: .relaxed) == 0)

        // Work queued by another thread while a block runs waits for it, then runs.
        let queued = DispatchSemaphore(value: 0)
        let later = DispatchSemaphore(value: 0)
        let order = Mutex<[String]>([])
        executor.run {
            Thread.detachNewThread {
                executor.submit {
                    order.withLock { $0.append("queued") }
                    later.signal()
                }
                queued.signal()
            }
            #expect(queued.wait(timeout: .now() + .seconds(120)) == .success)
            order.withLock { $0.append("block") }
        }
        #expect(later.wait(timeout: .now() + .seconds(120)) == .success)
        #expect(order.withLock { $0 } == ["block", "queued"])
    }
}
