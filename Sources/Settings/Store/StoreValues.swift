public import Observation
import SettingsPlist
public import Synchronization

/// A store's values and who hears of their changes: the synchronous half of
/// ``SettingsStore``, which every read and write goes through and no file work ever touches.
///
/// It is kept inline in the store (a non-copyable struct, not an object of its own): a
/// `@Setting` already holds the store, and a separate object would add a reference count
/// to every write (measured: +7% instructions per `@Setting` write).
///
/// - the layers and the bookkeeping of writes (``SettingsStore/State``) behind one `Mutex`
///   that every read and write takes briefly and no system call is made under;
/// - the observers, and the Observation framework's registrar settings report reads to;
/// - the generation, bumped on every change, that `@Setting` caches compare to stay current.
///
/// A file store's file is elsewhere (``FileBackend``, an actor on the store's persistence
/// thread); it reaches the values only through the store's one write path
/// (``SettingsStore/commit(_:origin:loadingFile:_:)``) and the batch a save takes of the user layer.
@usableFromInline
struct StoreValues: ~Copyable, Sendable {
    /// Bumped on every change to any layer. (First: the `@Setting` read compares it, and a
    /// field at a fixed offset needs no look-up of the layout of the fields after it.)
    @usableFromInline let generationCounter = Atomic<UInt64>(0)
    /// The layers and the bookkeeping of writes. Use ``SettingsStore/withState(_:)``, which
    /// loads a file store's file first.
    ///
    /// **Lock order.** One lock may be taken while this one is held: ``PendingSaves``' list, when
    /// a write gives the store its first unsaved change or a save leaves it clean (the keep-alive
    /// must change in the same step as ``UnsavedChanges/pending``). `PendingSaves` never takes
    /// a store's lock while holding its own (the exit save copies the list first). No other lock
    /// is ever held with this one: observers, the Observation registrar, diagnostics handlers and
    /// the file backend's status, listeners and published history are all reached after it is
    /// released, and a file store's file is isolated to its ``FileBackend`` actor, which holds no
    /// lock across a call into the store.
    let storage = Mutex(SettingsStore.State())
    /// Who is told about changes, and the queue their callbacks go through.
    let observers = SettingsObservers()
    /// The Observation framework's registrar: settings report reads to it, changes reach it
    /// through ``SettingsStore/deliver(_:)``.
    @usableFromInline let registrar = ObservationRegistrar()

    @usableFromInline init() {}

    /// The change counter: different whenever any layer changed since it was last read.
    @inlinable var generation: UInt64 { generationCounter.load(ordering: .acquiring) }
}
