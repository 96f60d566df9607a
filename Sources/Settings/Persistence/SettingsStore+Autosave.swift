#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import Synchronization

/// What the autosave of a store is doing.
struct AutosaveState {
    /// Whether the current run of failures was reported (a failure is reported once, until a save succeeds).
    var failureReported = false
    /// Whether waiting for another process's lock was reported in the current run.
    var lockReported = false
}

extension SettingsStore {
    /// Starts a save after the autosave delay (once per burst of changes).
    nonisolated func scheduleSave() {
        guard persistence?.autosaveDelay != nil else { return }
        Task { await self.runAutosave() }  // holds the store until its changes are saved
    }

    /// Waits for the autosave delay, then saves; retries with backoff while the lock is busy or
    /// the save fails, reporting a failure once; ends when nothing is left to save.
    func runAutosave() async {
        guard let options = persistence, let delay = options.autosaveDelay else { return }
        try? await Task.sleep(for: delay)
        var backoff = Duration.milliseconds(100)
        var busySince: ContinuousClock.Instant?
        while true {
            var pause = delay
            do {
                switch try saveOnce() {
                case .nothing, .saved:
                    autosave = AutosaveState()
                    busySince = nil
                    backoff = .milliseconds(100)
                    let done = storage.locked { s -> Bool in
                        guard s.dirty.isEmpty else { return false }
                        s.saveScheduled = false
                        return true
                    }
                    if done { return }
                case .busy(let lock):
                    let since = busySince ?? ContinuousClock.now
                    busySince = since
                    if !autosave.lockReported, ContinuousClock.now - since > options.lockTimeout {
                        autosave.lockReported = true
                        report(SettingsDiagnostic(.fileError, "\(url?.path ?? "?"): another process has held the lock \(lock) for more than \(options.lockTimeout); the changes are kept and saving is retried"))
                    }
                    pause = min(backoff, .milliseconds(200))
                    backoff = min(backoff * 2, .seconds(5))
                case .settling(let wait):
                    pause = wait
                }
            } catch {
                if !autosave.failureReported {
                    autosave.failureReported = true
                    report(SettingsDiagnostic(.fileError, "\(error); retrying"))
                }
                pause = backoff
                backoff = min(backoff * 2, .seconds(5))
            }
            try? await Task.sleep(for: pause)
        }
    }

    /// Tries a save on the store's thread as soon as it is free (called when a ``LockWaiter``
    /// got the lock another process held).
    nonisolated func saveSoon() {
        executor.schedule(after: .zero) { [weak self] in
            self?.assumeIsolated { store in _ = try? store.saveOnce() }
        }
    }
}
