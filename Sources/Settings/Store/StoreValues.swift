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
/// A file store's file is elsewhere (``FileBackend``), used only on the store's persistence
/// thread; it reaches the values only through the store's one write path
/// (``SettingsStore/commit(_:origin:loadingFile:_:)``) and the save's snapshot of the user layer.
@usableFromInline
struct StoreValues: ~Copyable, Sendable {
    /// Bumped on every change to any layer. (First: the `@Setting` read compares it, and a
    /// field at a fixed offset needs no look-up of the layout of the fields after it.)
    @usableFromInline let generationCounter = Atomic<UInt64>(0)
    /// The layers and the bookkeeping of writes. Use ``SettingsStore/withState(_:)``, which
    /// loads a file store's file first.
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
