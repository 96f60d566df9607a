import SettingsPlist
import Synchronization

/// What only a file store has beside its values: how its file is kept, what its persistence
/// found (readable without waiting for it), who listens to that, whether the file watcher holds
/// an entry for it, and its own persistence thread.
///
/// In-memory stores have none: their (empty) persistence runs on
/// ``SettingsStore/inMemoryExecutor``, one idle executor shared by all of them, which starts a
/// thread only if one of them is flushed. The file itself, and the autosave's retry state, are
/// isolated to the store (``SettingsStore/file``, ``SettingsStore/autosave``).
final class FileBackend: Sendable {
    /// How the file is kept: timings and limits.
    let options: PersistenceOptions
    /// What the store's persistence has found and done, readable without waiting for it.
    let status: Mutex<SettingsStore.PersistenceStatus>
    /// Who listens to ``SettingsStore/persistenceUpdates``.
    let statusListeners = Mutex(StatusListeners())
    /// Whether the file watcher holds an entry for the store (given back when it is freed).
    let watched = Atomic<Bool>(false)
    /// The store's own persistence thread (started by its first job).
    let executor = PersistenceExecutor()

    init(options: PersistenceOptions, format: PlistFormat) {
        self.options = options
        self.status = Mutex(SettingsStore.PersistenceStatus(format: format))
    }
}
