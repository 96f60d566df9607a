#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles
import Synchronization

/// Everything a file store has beside its values: the file and how it is kept, what its
/// persistence found (readable without waiting for it), who listens to that, whether the file
/// watcher holds an entry for it, the provenance it publishes, and its own persistence thread.
///
/// In-memory stores have none: no file, no thread, no watch, no status, no history.
///
/// The file (``SettingsFile``: load, save, merge, reload) is used only by the job the executor is
/// running (its thread, or a caller that runs its queue while nobody owns it; jobs never
/// overlap). It sits in a `Mutex` so that rule is checked by the compiler rather than argued: the
/// lock is never contended, and is held only for one step of the file (never while user code,
/// observers or diagnostics handlers run: their work is collected and delivered after).
final class FileBackend: Sendable {
    /// How the file is kept: timings and limits.
    let options: PersistenceOptions
    /// The file, used only on ``executor`` (see ``withFile(_:)``).
    private let file: Mutex<SettingsFile>
    /// What the store's persistence has found and done, readable without waiting for it.
    let status: Mutex<SettingsStore.PersistenceStatus>
    /// Who listens to ``SettingsStore/persistenceUpdates``.
    let statusListeners = Mutex(StatusListeners())
    /// Whether the file watcher holds an entry for the store (given back when it is freed).
    let watched = Atomic<Bool>(false)
    /// Whether the `layers.plist` manifest was brought up to date after the first save.
    let manifestChecked = Atomic<Bool>(false)
    /// Provenance of the file's keys and notes of non-write origins (see
    /// SettingsFile+History.swift). Never touched by `@Setting` reads or writes.
    let history = StoreHistory()
    /// The administrator's files' problems already reported (each is reported once while it lasts).
    let reportedSystemProblems = Mutex<Set<String>>([])
    /// The store's own persistence thread (started by its first job).
    let executor = PersistenceExecutor()

    init(url: URL, options: PersistenceOptions, format: PlistFormat) {
        self.options = options
        var file = SettingsFile(url: url, format: format, options: options)
        file.history = history
        self.file = Mutex(file)
        self.status = Mutex(SettingsStore.PersistenceStatus(format: format))
    }

    /// Runs one step of the file (load, save, reload): only on ``executor``, with no user code
    /// called from `body`.
    func withFile<R: ~Copyable, E: Error>(_ body: (inout SettingsFile) throws(E) -> R) throws(E) -> R {
        assert(executor.isCurrent, "a settings file was used outside its store's persistence thread")
        return try file.locked { (f: inout SettingsFile) throws(E) -> R in try body(&f) }
    }
}
