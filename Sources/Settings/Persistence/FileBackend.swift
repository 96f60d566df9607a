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
/// In-memory stores have none: no file, no thread, no watch, no status, no history, and no
/// executor (``SettingsStore`` itself is a plain actor).
///
/// An actor whose executor is the store's own ``PersistenceExecutor`` thread: the file
/// (``SettingsFile``: load, save, merge, reload), the place in the queue for another process's
/// lock, and whether the layers manifest was written are its isolated state, so the compiler
/// confines them to that thread. The store's persistence steps are functions isolated to it
/// (`_ backend: isolated FileBackend`): awaited from tasks, or entered synchronously with
/// `assumeIsolated` by work the executor runs (autosave timers, the file watcher, `flushNow()`,
/// the exit save), whose thread the executor's `checkIsolated()` vouches for. None of them runs
/// user code: observers and diagnostics handlers are called after each step, with no lock held.
///
/// What other threads read without waiting for the disk (status, listeners, the watch flag,
/// published provenance) is `Sendable` state behind its own small locks (see ``StoreValues``
/// for the order of locks).
actor FileBackend {
    /// How the file is kept: timings and limits.
    nonisolated let options: PersistenceOptions
    /// The file: used only isolated to this actor, on its thread.
    var file: SettingsFile
    /// This store's place in the queue for the file's lock while another process holds it
    /// (see ``LockWaiter``); dropping it gives the place up.
    var lockWaiter: LockWaiter?
    /// Whether the `layers.plist` manifest was brought up to date after the first save.
    var manifestChecked = false
    /// When this store last saved the file (a flush or an autosave): the lock was free then, so
    /// the autosave counts a wait for another process's lock from no earlier than this.
    var lastSave: ContinuousClock.Instant?
    /// What the store's persistence has found and done, readable without waiting for it.
    nonisolated let status: Mutex<SettingsStore.PersistenceStatus>
    /// Who listens to ``SettingsStore/persistenceUpdates``.
    nonisolated let statusListeners = Mutex(StatusListeners())
    /// Whether the file watcher holds an entry for the store (given back when it is freed).
    nonisolated let watched = Atomic<Bool>(false)
    /// Provenance of the file's keys and notes of non-write origins (see
    /// SettingsFile+History.swift). Never touched by `@Setting` reads or writes.
    nonisolated let history = StoreHistory()
    /// The administrator's files' problems already reported (each is reported once while it lasts).
    nonisolated let reportedSystemProblems = Mutex<Set<String>>([])
    /// The store's own persistence thread (started by its first job).
    nonisolated let executor = PersistenceExecutor()

    /// Everything isolated to the backend runs on the store's persistence thread.
    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    init(url: URL, options: PersistenceOptions, format: PlistFormat) {
        self.options = options
        var file = SettingsFile(url: url, format: format, options: options)
        file.history = history
        self.file = file
        self.status = Mutex(SettingsStore.PersistenceStatus(format: format))
    }

    /// Runs `body` isolated to the backend, synchronously: only from work its executor runs
    /// (the executor's `checkIsolated()` stops the process on any other thread).
    nonisolated func onThread<T: Sendable, E: Error>(_ body: @Sendable (isolated FileBackend) throws(E) -> T) throws(E) -> T {
        try assumeIsolated { backend in Result { () throws(E) -> T in try body(backend) } }.get()
    }
}

extension FileBackend {
    /// Looks at `store`'s file on the persistence thread and waits for it, as the file watcher's
    /// request does (for tests and the store's own synchronous callers).
    nonisolated func reloadOnThread(_ store: SettingsStore) {
        executor.runAndWait { self.onThread { store.reloadIfChanged($0) } }
    }
}
