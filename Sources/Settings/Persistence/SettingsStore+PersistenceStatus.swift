#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import SettingsPlist
import Synchronization

nonisolated extension SettingsStore {
    /// The problem found when the file was loaded: malformed or unusable, or moved aside since.
    /// `nil` when it loaded cleanly or did not exist.
    public var loadError: SettingsError? {
        guard let backend else { return nil }
        ensureLoaded()
        return backend.status.locked { $0.loadError }
    }

    /// Counters and findings of the store's file persistence.
    public struct PersistenceStatus: Hashable, Sendable {
        /// Files written by this process (each a whole, atomic, durable replacement).
        public var fileWrites: Int = 0
        /// Times the file was reloaded after a change made elsewhere.
        public var reloads: Int = 0
        /// Where a malformed file was moved, if it was.
        public var movedAside: URL?
        /// Changes not yet written.
        public var hasUnsavedChanges: Bool = false
        /// The last save that failed (cleared by the next one that succeeds).
        public var lastSaveError: SettingsError?
        /// Whether a save is waiting for a malformed file to settle before moving it aside.
        public var waitingForFileToSettle: Bool = false
        /// The problem found when the file was loaded.
        var loadError: SettingsError?
        /// The format the file is written in.
        var format: PlistFormat

        init(format: PlistFormat) {
            self.format = format
        }
    }

    /// What the store's persistence has done so far. Reading it never waits for the disk.
    ///
    /// ```swift
    /// store.persistenceStatus.fileWrites    // 1 after a burst of 10,000 writes and a flush
    /// ```
    public var persistenceStatus: PersistenceStatus {
        let unsaved = values.storage.locked { !$0.unsaved.isEmpty }
        var result = backend?.status.locked { $0 } ?? PersistenceStatus(format: .xml)
        result.hasUnsavedChanges = unsaved
        return result
    }

    /// The persistence status after every save, failed save, reload and move-aside, as an
    /// asynchronous sequence (for a "saved" indicator, or to wait for a save in tests).
    ///
    /// ```swift
    /// for await status in store.persistenceUpdates where status.lastSaveError != nil {
    ///     showBanner("Settings could not be saved")
    /// }
    /// ```
    ///
    /// An in-memory store has no persistence: its sequence never yields.
    public var persistenceUpdates: AsyncStream<PersistenceStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: PersistenceStatus.self, bufferingPolicy: .bufferingNewest(64))
        guard let backend else { return stream }  // an in-memory store: nothing ever happens
        let id = backend.statusListeners.locked { l in
            defer { l.next += 1 }
            l.continuations[l.next] = continuation
            return l.next
        }
        continuation.onTermination = { [weak backend] _ in
            _ = backend?.statusListeners.locked { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Copies the file's findings where ``persistenceStatus`` reads them without waiting.
    func publishStatus(_ backend: isolated FileBackend, saveError: SettingsError?? = nil, settling: Bool = false) {
        let file = backend.file
        var current = backend.status.locked { s in
            s.fileWrites = file.writes
            s.reloads = file.reloads
            s.movedAside = file.movedAside
            s.loadError = file.loadError
            s.format = file.format
            s.waitingForFileToSettle = settling
            if let saveError { s.lastSaveError = saveError }
            return s
        }
        let listeners = backend.statusListeners.locked { Array($0.continuations.values) }
        guard !listeners.isEmpty else { return }
        current.hasUnsavedChanges = values.storage.locked { !$0.unsaved.isEmpty }
        for listener in listeners { listener.yield(current) }
    }
}

/// The continuations of ``SettingsStore/persistenceUpdates``.
struct StatusListeners: Sendable {
    var continuations: [Int: AsyncStream<SettingsStore.PersistenceStatus>.Continuation] = [:]
    var next = 0
}
