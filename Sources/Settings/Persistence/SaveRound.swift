#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One save of several stores at once, each on its own thread (fsyncs of different files
/// overlap, where saving them one after another pays each in turn), waited for with a bound.
final class SaveRound: Sendable {
    /// What became of the stores when the round ended.
    struct Outcome {
        /// Stores whose save failed, or had not finished in time (`nil` error).
        var failures: [(store: SettingsStore, error: SettingsError)] = []

        /// One error naming every failure, or `nil` when all were saved.
        func error(within timeout: Duration) -> SettingsError? {
            guard let first = failures.first else { return nil }
            if failures.count == 1 { return first.error }
            let list = failures.map { "\($0.store.url?.path ?? "?"): \($0.error.detail ?? $0.error.description)" }
            return SettingsError(.invalidFile, path: first.store.url?.path,
                                 detail: "\(failures.count) settings stores not saved within \(timeout): " + list.joined(separator: "; "))
        }
    }

    private struct State {
        var remaining: [ObjectIdentifier: SettingsStore]
        /// Files whose stores have not started saving yet.
        var queued: ArraySlice<ArraySlice<SettingsStore>>
        var failures: [(store: SettingsStore, error: SettingsError)] = []
        var waiter: CheckedContinuation<Void, Never>?
        /// Every store finished, or the round was ended.
        var ended = false
        /// The time ran out (the asynchronous wait's timer fired).
        var timedOut = false
        /// The CPU clock of the thread saving each store, and its time when last looked at.
        var workers: [ObjectIdentifier: (clock: clockid_t, used: Int64)] = [:]
    }

    private let state: Mutex<State>
    /// How long each store's save may wait for another process's lock (`nil`: its own timeout).
    private let lockWait: Duration?
    /// Told each time a store finishes (the exit saver's sign of progress for the exit hook).
    private let onProgress: @Sendable () -> Void
    private let done = DispatchSemaphore(value: 0)
    /// How many stores finished so far.
    private let progress = Atomic<Int>(0)

    /// How many files are saved at once. Several stores of one file are saved by one of them
    /// (see ``gather(_:into:)``): one lock, one write and one fsync for all.
    static let width = 8

    /// Starts saving `stores`, ``width`` files at a time, each file by one store on its own
    /// executor (inline for the calling thread's own).
    init(_ stores: [SettingsStore], lockWait: Duration? = nil, onProgress: @escaping @Sendable () -> Void = {}) {
        self.lockWait = lockWait
        self.onProgress = onProgress
        var files: [String: [SettingsStore]] = [:]
        var order: [String] = []
        for store in stores {
            let path = store.url?.path ?? ""
            if files[path] == nil { order.append(path) }
            files[path, default: []].append(store)
        }
        var lanes: [ArraySlice<SettingsStore>] = []
        for path in order {
            guard let group = files[path] else { continue }
            if !path.isEmpty, group.count > 1, let target = group.first(where: { $0.loaded.load(ordering: .acquiring) }) {
                Self.gather(group.filter { $0 !== target }[...], into: target, onProgress: onProgress)
                lanes.append([target])
            } else {
                lanes.append(group[...])
            }
        }
        let saving = lanes.joined()
        state = Mutex(State(remaining: Dictionary(saving.map { (ObjectIdentifier($0), $0) }, uniquingKeysWith: { a, _ in a }),
                            queued: lanes.dropFirst(Self.width)))
        for lane in lanes.prefix(Self.width) { save(lane) }
    }

    /// Moves the unsaved changes of `others` (stores of `store`'s file) into `store`, so that one
    /// save writes them all; the others are left clean. Their user layers keep their values;
    /// `store` announces the values it takes on as `.externalFile` changes, as it would have
    /// after the others' own saves. `store` must be loaded (it tracks its changes).
    private static func gather(_ others: ArraySlice<SettingsStore>, into store: SettingsStore, onProgress: () -> Void) {
        for (i, other) in others.enumerated() {
            if i % 64 == 0 { onProgress() }  // gathering thousands of stores is progress too
            let writes = other.values.storage.locked { s -> [(key: SettingsKey, value: PlistValue?)] in
                var seen = Set<SettingsKey>()
                return s.unsaved.takeDirty().filter { seen.insert($0).inserted }.map { ($0, s[.user].value(at: $0.components)) }
            }
            store.applyToUserLayer(writes, origin: .externalFile)
            store.values.storage.locked { s in
                // Keys whose value `store` already had are still other's changes: save them too.
                for write in writes { s.markDirtyKeepingAlive(write.key, store: store) }
            }
            other.releaseIfClean()
        }
    }

    /// Saves the first store of `lane`, then the rest of it, then the next queued lane.
    private func save(_ lane: ArraySlice<SettingsStore>) {
        guard let store = lane.first else {
            if let next = state.locked({ $0.queued.popFirst() }) { save(next) }
            return
        }
        guard let executor = store.backend?.executor else {
            finished(store, nil)  // an in-memory store has nothing to save
            save(lane.dropFirst())
            return
        }
        executor.submit { [self] in
            if let clock = Self.threadCPUClock() {
                state.locked { $0.workers[ObjectIdentifier(store)] = (clock, Self.cpuTime(clock)) }
            }
            do throws(SettingsError) {
                try store.flushNow(waitingAtMost: lockWait)
                finished(store, nil)
            } catch {
                finished(store, error)
            }
            save(lane.dropFirst())
        }
    }

    private func finished(_ store: SettingsStore, _ error: SettingsError?) {
        let waiter = state.locked { s -> CheckedContinuation<Void, Never>?? in
            guard !s.ended, s.remaining.removeValue(forKey: ObjectIdentifier(store)) != nil else { return nil }
            if let error { s.failures.append((store, error)) }
            guard s.remaining.isEmpty else { return nil }
            s.ended = true
            defer { s.waiter = nil }
            return .some(s.waiter)
        }
        progress.add(1, ordering: .relaxed)
        onProgress()
        guard let waiter else { return }
        done.signal()
        waiter?.resume()
    }

    /// Ends the round: the stores still saving are failures, for the reason given.
    private func end(_ reason: String) -> Outcome {
        state.locked { s in
            s.ended = true
            for store in s.remaining.values {
                s.failures.append((store, SettingsError(.invalidFile, path: store.url?.path, detail: "still saving \(reason); its changes are kept and saved later")))
            }
            s.remaining = [:]
            s.queued = []
            return Outcome(failures: s.failures)
        }
    }

    /// Waits, blocking the calling thread, until every store is saved or `timeout` has passed.
    func finish(within timeout: Duration) -> Outcome {
        _ = done.wait(timeout: .now() + .nanoseconds(Int(clamping: Self.nanoseconds(timeout))))
        return end("after \(timeout)")
    }

    /// Waits, blocking the calling thread, while saves keep finishing: until every store is
    /// saved, or no save finished for `stall` (each store's own wait is bounded, so a round
    /// that stops making progress is one waiting for something that will not come).
    ///
    /// A round that stalls is given up only when a store it waits for is `stuck` (its lock held
    /// by a thread that will not release it); stores that are merely slow (a large file, a busy
    /// disk, a sanitizer) are waited for, up to `patience` in all, calling `stillSaving` each
    /// period (every store's own waits are bounded, so a slow round ends).
    func finish(stalledFor stall: Duration, stuck: (SettingsStore) -> Bool = { _ in true },
                patience: Duration = .seconds(60), stillSaving: () -> Void = {}) -> Outcome {
        let start = ContinuousClock.now
        // A whole period with no store finished, seen twice, before anything is looked at.
        var seen = -1
        while done.wait(timeout: .now() + .nanoseconds(Int(clamping: Self.nanoseconds(stall)))) == .timedOut {
            let now = progress.load(ordering: .relaxed)
            if now == seen {
                let waiting = state.locked { Array($0.remaining.values) }
                if ContinuousClock.now - start > patience || waiting.contains(where: stuck) || !workersRan() { break }
                stillSaving()
                continue
            }
            seen = now
        }
        return end("with no save finished for \(stall)")
    }

    /// Whether a thread saving a store of this round used the CPU since this was last asked: a
    /// save that is slow computes or waits for the disk; one that waits for a lock the exiting
    /// thread holds (the allocator's, after `exit()` from a signal handler that interrupted
    /// `malloc`) uses none. Where threads' CPU clocks cannot be read, every save counts as running.
    private func workersRan() -> Bool {
        state.locked { s in
            guard !s.workers.isEmpty else { return Self.threadCPUClock() == nil }
            var ran = false
            for (id, worker) in s.workers where s.remaining[id] != nil {
                let used = Self.cpuTime(worker.clock)
                if used > worker.used { ran = true }
                s.workers[id] = (worker.clock, used)
            }
            return ran
        }
    }

    /// The calling thread's CPU clock, where the platform has one per thread.
    private static func threadCPUClock() -> clockid_t? {
        #if canImport(Glibc) || canImport(Musl)
        var clock = clockid_t()
        return pthread_getcpuclockid(pthread_self(), &clock) == 0 ? clock : nil
        #else
        return nil
        #endif
    }

    /// The CPU time a thread's clock shows, in nanoseconds.
    private static func cpuTime(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        guard clock_gettime(clock, &now) == 0 else { return 0 }
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        max(0, duration.components.seconds) * 1_000_000_000 + max(0, duration.components.attoseconds) / 1_000_000_000
    }

    /// Waits, without blocking a thread, until every store is saved or `timeout` has passed.
    func finish(within timeout: Duration) async -> Outcome {
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            let waiter = state.locked { s -> CheckedContinuation<Void, Never>? in
                s.timedOut = true
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.locked { s -> Bool in
                if s.ended || s.timedOut { return true }
                s.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
        return end("after \(timeout)")
    }
}
