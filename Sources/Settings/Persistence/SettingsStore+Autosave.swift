#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import Synchronization

extension SettingsStore {
    /// Starts a save after the autosave delay (once per burst of changes).
    nonisolated func scheduleSave() {
        guard let backend, backend.options.autosaveDelay != nil else { return }
        Task { await self.runAutosave(backend) }  // holds the store until its changes are saved
    }

    /// Waits for the autosave delay, then saves; retries with backoff while the lock is busy or
    /// the save fails, reporting a failure once; ends when nothing is left to save.
    func runAutosave(_ backend: isolated FileBackend) async {
        let options = backend.options
        guard let delay = options.autosaveDelay else { return }
        try? await Task.sleep(for: delay)
        var backoff = Duration.milliseconds(100)
        var busySince: ContinuousClock.Instant?
        // Whether this run reported a failure, or the wait for another process's lock: each is
        // reported once per run (a run ends when nothing is left to save).
        var failureReported = false
        var lockReported = false
        while true {
            var pause = delay
            do {
                switch try saveOnce(backend) {
                case .nothing, .saved:
                    failureReported = false
                    lockReported = false
                    busySince = nil
                    backoff = .milliseconds(100)
                    let done = values.storage.locked { s -> Bool in
                        guard s.unsaved.isEmpty else { return false }
                        s.unsaved.saveScheduled = false
                        return true
                    }
                    if done { return }
                case .busy(let lock):
                    let since = Self.lockWaitStart(busySince: busySince ?? ContinuousClock.now, lastSave: backend.lastSave)
                    busySince = since
                    if !lockReported, ContinuousClock.now - since > options.lockTimeout {
                        lockReported = true
                        report(SettingsDiagnostic(.fileError, "\(url?.path ?? "?"): another process has held the lock \(lock) for more than \(options.lockTimeout); the changes are kept and saving is retried"))
                    }
                    pause = min(backoff, .milliseconds(200))
                    backoff = min(backoff * 2, .seconds(5))
                case .settling(let wait):
                    pause = wait
                }
            } catch {
                if !failureReported {
                    failureReported = true
                    report(SettingsDiagnostic(.fileError, "\(error); retrying"))
                }
                pause = backoff
                backoff = min(backoff * 2, .seconds(5))
            }
            try? await Task.sleep(for: pause)
        }
    }

    /// Since when the autosave has waited for another process's lock: its first busy attempt,
    /// or the store's last save when that came later (a `flush()` that got the lock in between).
    /// Several processes saving one file take the lock in turn; the autosave may find it busy at
    /// every try while each of them, this store's flushes included, holds it briefly, and that is
    /// not another process holding it for longer than the lock timeout.
    static func lockWaitStart(busySince: ContinuousClock.Instant, lastSave: ContinuousClock.Instant?) -> ContinuousClock.Instant {
        guard let lastSave, lastSave > busySince else { return busySince }
        return lastSave
    }

    /// Tries a save on the store's thread as soon as it is free (called when a ``LockWaiter``
    /// got the lock another process held).
    nonisolated func saveSoon() {
        guard let backend else { return }
        backend.executor.schedule(after: .zero) { [weak self] in
            guard let self else { return }
            _ = backend.onThread { try? self.saveOnce($0) }
        }
    }
}
