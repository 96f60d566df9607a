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

/// The file stores with unsaved changes, held strongly: a store is not freed before its changes
/// are saved, and they are saved when the process exits normally (`exit()` or the end of
/// `main`), within a bound. A crash, `SIGKILL`, or a signal whose action is the default skips the
/// exit save (see ``SettingsStore/saveOnTermination(signals:timeout:)``): what `flush()` returned
/// for is on disk regardless.
///
/// Lock order: its list's lock is taken with a store's lock held (``StoreValues/storage``), and
/// nothing is locked while it is held; the store's lock is never taken under it.
enum PendingSaves {
    private static let stores = Mutex<[ObjectIdentifier: SettingsStore]>([:])
    private static let installed: Void = {
        atexit { ExitSaver.saveAtExit() }
    }()

    static func add(_ store: SettingsStore) {
        _ = installed
        let limit = FlushRetry.limit(of: store)  // only the bound: no clock is started
        let start = stores.locked { s -> Bool in
            s[ObjectIdentifier(store)] = store
            ExitSaver.noteStall(limit)
            return ExitSaver.shouldStart()
        }
        if start { ExitSaver.start() }
    }

    /// Ends the exit saver's thread when no store is pending (`end` runs under the lock, so a
    /// store added meanwhile starts a new one, and says whether it ended); `true` when it ended.
    static func endSaverIfIdle(_ end: () -> Bool) -> Bool {
        stores.locked { s in s.isEmpty && end() }
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
        stores.map(FlushRetry.limit(of:)).max().map { $0 + .seconds(1) } ?? .zero
    }

    /// Saves every pending store concurrently, in passes: writes that other threads make
    /// meanwhile are saved by the next pass (at most three). All passes together end within
    /// `bound`, or (`nil`) when no save finished for ``exitStall(_:)``. Nothing here waits for a
    /// store's lock: each store saves on its own thread, so a lock the calling thread holds
    /// (`exit()` from a signal handler that interrupted a write) stalls only that store's save,
    /// which is given up at the bound and reported as such. Failures are reported to each
    /// store's diagnostics handler, naming `when`.
    static func saveAll(within bound: Duration?, when: String, progress: @escaping @Sendable () -> Void = {}) {
        let start = ContinuousClock.now
        var given = Set<ObjectIdentifier>()
        for _ in 0..<3 {
            defer { progress() }
            guard let pending = allIfAvailable(patience: lockPatience) else {
                SettingsDiagnostics.report(SettingsDiagnostic(.fileError, "\(when): the list of unsaved settings stores is locked by the thread that is ending the process (exit() called from a signal handler?); unsaved settings are lost"))
                return
            }
            let ready = pending.filter { !given.contains(ObjectIdentifier($0)) }
            guard !ready.isEmpty else { return }
            // A caller's bound is also how long each save may wait for another process's lock.
            let round = SaveRound(ready, lockWait: bound.map { $0 - (ContinuousClock.now - start) }, onProgress: progress)
            progress()  // the stores are gathered and saving
            let outcome = bound.map { round.finish(within: $0 - (ContinuousClock.now - start)) }
                ?? round.finish(stalledFor: exitStall(ready), stuck: isStuck, stillSaving: progress)
            for (store, error) in outcome.failures {
                given.insert(ObjectIdentifier(store))
                // A save that never finished, on a store whose lock is still not free: its lock is
                // held by this thread, which will not release it.
                if error.detail?.hasPrefix("still saving") == true,
                   tryLocking(patience: lockPatience, { store.values.storage.withLockIfAvailable { _ in true } }) == nil {
                    store.report(SettingsDiagnostic(.fileError, "\(store.url?.path ?? "?"): the store's lock is held by the thread that is ending the process (exit() called from a signal handler, or while a store callback ran); \(when) its unsaved changes are lost"))
                } else {
                    store.report(SettingsDiagnostic(.fileError, "\(error) (\(when): these changes are lost)"))
                }
            }
        }
    }

    /// Whether `store`'s lock is held by a thread that will not release it (still held after
    /// ``lockPatience``): the exiting thread, called from a signal handler or a callback.
    private static func isStuck(_ store: SettingsStore) -> Bool {
        tryLocking(patience: lockPatience, { store.values.storage.withLockIfAvailable { _ in true } }) == nil
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
