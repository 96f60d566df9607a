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

extension SettingsStore {
    /// Saves the unsaved changes of every file store in the process, concurrently, and returns
    /// when they are durable or when `timeout` has passed, whichever comes first.
    ///
    /// Each store saves on its own thread as ``flush()`` does (waiting at most its own lock
    /// timeout for another process); stores without unsaved changes are skipped. Call it before a
    /// planned shutdown: a server's graceful-shutdown hook, or after the last request. Nothing
    /// waits longer than `timeout`: a store still saving then (a stalled disk) goes on saving in
    /// the background, and is named in the error.
    ///
    /// ```swift
    /// try await SettingsStore.flushAll(timeout: .seconds(5))
    /// ```
    ///
    /// - Parameter timeout: the longest the call waits for all the saves together.
    /// - Throws: ``SettingsError`` naming every store that could not be saved and why (its own
    ///   error, or "still saving" when the time ran out); its ``SettingsError/code`` is the one
    ///   failure's code when only one store failed, ``SettingsError/Code/invalidFile`` otherwise.
    ///   Their changes are kept and saved by a later flush or autosave.
    public static func flushAll(timeout: Duration) async throws(SettingsError) {
        let stores = PendingSaves.all()
        guard !stores.isEmpty else { return }
        let round = SaveRound(stores)
        let outcome = await round.finish(within: timeout)
        if let error = outcome.error(within: timeout) { throw error }
    }

    /// Saves the unsaved changes of every file store in the process: ``flushAll(timeout:)``
    /// bounded only by each store's own lock timeout.
    ///
    /// ```swift
    /// try await SettingsStore.flushAll()
    /// ```
    ///
    /// - Throws: ``SettingsError`` as ``flushAll(timeout:)`` does; the other stores are still saved.
    public static func flushAll() async throws(SettingsError) {
        try await flushAll(timeout: .seconds(3600))
    }

    /// Saves every store's unsaved changes when the process is asked to terminate (`SIGTERM`,
    /// `SIGINT`, `SIGHUP` by default), then lets the signal's default action end the process.
    ///
    /// Without it, a signal whose action is the default ends the process at once: the exit
    /// hook does not run, and every write not yet saved (the autosave runs 50 ms after a change)
    /// is lost, though the file itself is always whole. Daemons are stopped with `SIGTERM`
    /// (systemd, container runtimes, `kill`), terminals send `SIGINT` and `SIGHUP`: a server
    /// should call this once at start-up.
    ///
    /// The signals are received through a `DispatchSource` (the process-level handler only
    /// wakes it: no lock, no allocation in signal context). On the first of them, every store
    /// with unsaved changes is saved as ``flushAll(timeout:)`` does, failures go to the stores'
    /// diagnostics handlers, then the signal's action is reset to the default and the signal is
    /// raised again, so the process ends as it would have (its exit status says which signal).
    /// Calling it again changes nothing. A program that handles these signals itself should
    /// call ``flushAll(timeout:)`` from its own handling instead.
    ///
    /// ```swift
    /// @main struct Server {
    ///     static func main() async throws {
    ///         SettingsStore.saveOnTermination()
    ///         try await serve()
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - signals: the signals that save before ending the process (`nil`: `SIGTERM`, `SIGINT`
    ///     and `SIGHUP`).
    ///   - timeout: the longest the saves may take together before the process ends anyway.
    public static func saveOnTermination(signals: [Int32]? = nil, timeout: Duration = .seconds(5)) {
        TerminationSaver.shared.install(signals: signals ?? [SIGTERM, SIGINT, SIGHUP], timeout: timeout)
    }
}

/// The signal sources of ``SettingsStore/saveOnTermination(signals:timeout:)``.
final class TerminationSaver: Sendable {
    static let shared = TerminationSaver()

    private struct State {
        var sources: [Int32: any DispatchSourceSignal] = [:]
        var timeout: Duration = .seconds(5)
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "settings.termination")

    func install(signals: [Int32], timeout: Duration) {
        state.locked { s in
            s.timeout = timeout
            for number in signals where s.sources[number] == nil {
                signal(number, SIG_IGN)  // the source receives it; the default action is restored to end the process
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { TerminationSaver.shared.terminate(by: number) }
                source.resume()
                s.sources[number] = source
            }
        }
    }

    /// Saves every pending store within the timeout, then ends the process with `number`.
    private func terminate(by number: Int32) {
        let timeout = state.locked { $0.timeout }
        PendingSaves.saveAll(within: timeout, when: "at signal \(number)")
        signal(number, SIG_DFL)
        // Dispatch's threads block signals (and a process may inherit a mask): unblock it here.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(number)
        // Still here: the signal's default action is not to end the process. End it normally.
        exit(128 + number)
    }
}

/// The file stores with unsaved changes, held strongly: a store is not freed before its changes
/// are saved, and they are saved when the process exits normally (`exit()` or the end of
/// `main`), within a bound. A crash, `SIGKILL`, or a signal whose action is the default skips the
/// exit save (see ``SettingsStore/saveOnTermination(signals:timeout:)``): what `flush()` returned
/// for is on disk regardless.
enum PendingSaves {
    private static let stores = Mutex<[ObjectIdentifier: SettingsStore]>([:])
    private static let installed: Void = {
        atexit { PendingSaves.saveAllAtExit() }
    }()

    static func add(_ store: SettingsStore) {
        _ = installed
        stores.locked { $0[ObjectIdentifier(store)] = store }
    }

    static func remove(_ store: SettingsStore) {
        let removed = stores.locked { $0.removeValue(forKey: ObjectIdentifier(store)) }
        _ = removed  // released here, outside the lock
    }

    static func all() -> [SettingsStore] {
        stores.locked { Array($0.values) }
    }

    /// The pending stores, without waiting longer than `patience` for the lock (`nil`: the lock
    /// stayed held, for instance by the very thread that called `exit()` from a signal handler).
    private static func allIfAvailable(patience: Duration) -> [SettingsStore]? {
        tryLocking(patience: patience) { stores.withLockIfAvailable { Array($0.values) } }
    }

    /// How long the exit hook and the termination handler try a lock that another thread may
    /// hold (locks are held for microseconds; one held this long is held by the exiting thread).
    static let lockPatience: Duration = .milliseconds(500)

    /// How long the save at exit waits with no store finishing before it gives up on the rest:
    /// the longest time a pending store's flush may wait (its lock timeout plus twice its settle
    /// delay), plus one second.
    static func exitStall(_ stores: [SettingsStore]) -> Duration {
        stores.map { Deadline($0).limit }.max().map { $0 + .seconds(1) } ?? .zero
    }

    /// Saves every pending store at exit, concurrently, for as long as saves keep finishing
    /// (see ``exitStall(_:)``).
    private static func saveAllAtExit() {
        guard let stores = allIfAvailable(patience: lockPatience) else {
            SettingsDiagnostics.report(SettingsDiagnostic(.fileError, "exit: the list of unsaved settings stores is locked by the exiting thread (exit() called from a signal handler?); unsaved settings are lost"))
            return
        }
        guard !stores.isEmpty else { return }
        saveAll(within: nil, when: "at exit")
    }

    /// Saves every pending store concurrently, in passes: writes that other threads make
    /// meanwhile are saved by the next pass (at most three). All passes together end within
    /// `bound`, or (`nil`) when no save finished for ``exitStall(_:)``. Nothing here waits for a
    /// store's lock: each store saves on its own thread, so a lock the calling thread holds
    /// (`exit()` from a signal handler that interrupted a write) stalls only that store's save,
    /// which is given up at the bound and reported as such. Failures are reported to each
    /// store's diagnostics handler, naming `when`.
    static func saveAll(within bound: Duration?, when: String) {
        let start = ContinuousClock.now
        var given = Set<ObjectIdentifier>()
        for _ in 0..<3 {
            guard let pending = allIfAvailable(patience: lockPatience) else { return }
            let ready = pending.filter { !given.contains(ObjectIdentifier($0)) }
            guard !ready.isEmpty else { return }
            let round = SaveRound(ready)
            let outcome = bound.map { round.finish(within: $0 - (ContinuousClock.now - start)) } ?? round.finish(stalledFor: exitStall(ready))
            for (store, error) in outcome.failures {
                given.insert(ObjectIdentifier(store))
                // A save that never finished, on a store whose lock is still not free: its lock is
                // held by this thread, which will not release it.
                if error.detail?.hasPrefix("still saving") == true,
                   tryLocking(patience: lockPatience, { store.storage.withLockIfAvailable { _ in true } }) == nil {
                    store.report(SettingsDiagnostic(.fileError, "\(store.url?.path ?? "?"): the store's lock is held by the thread that is ending the process (exit() called from a signal handler, or while a store callback ran); \(when) its unsaved changes are lost"))
                } else {
                    store.report(SettingsDiagnostic(.fileError, "\(error) (\(when): these changes are lost)"))
                }
            }
        }
    }

    /// Calls `attempt` until it gives a value or `patience` has passed.
    private static func tryLocking<T>(patience: Duration, _ attempt: () -> T?) -> T? {
        let start = ContinuousClock.now
        while true {
            if let value = attempt() { return value }
            if ContinuousClock.now - start > patience { return nil }
            sched_yield()
        }
    }
}

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
    }

    private let state: Mutex<State>
    private let done = DispatchSemaphore(value: 0)
    /// How many stores finished so far.
    private let progress = Atomic<Int>(0)

    /// How many files are saved at once. Several stores of one file are saved by one of them
    /// (see ``gather(_:into:)``): one lock, one write and one fsync for all.
    static let width = 8

    /// Starts saving `stores`, ``width`` files at a time, each file by one store on its own
    /// executor (inline for the calling thread's own).
    init(_ stores: [SettingsStore]) {
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
                Self.gather(group.filter { $0 !== target }[...], into: target)
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
    private static func gather(_ others: ArraySlice<SettingsStore>, into store: SettingsStore) {
        for other in others {
            let writes = other.storage.locked { s -> [(key: SettingsKey, value: PlistValue?)] in
                var seen = Set<SettingsKey>()
                return s.takeDirty().filter { seen.insert($0).inserted }.map { ($0, s[.user].value(at: $0.components)) }
            }
            store.applyToUserLayer(writes, origin: .externalFile)
            store.storage.locked { s in
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
        store.executor.submit { [self] in
            do throws(SettingsError) {
                try store.flushNow()
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
    func finish(stalledFor stall: Duration) -> Outcome {
        var seen = -1
        while done.wait(timeout: .now() + .nanoseconds(Int(clamping: Self.nanoseconds(stall)))) == .timedOut {
            let now = progress.load(ordering: .relaxed)
            if now == seen { break }
            seen = now
        }
        return end("with no save finished for \(stall)")
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
