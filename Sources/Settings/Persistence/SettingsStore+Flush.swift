#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SettingsStore {
    /// Writes every change made so far to the file and returns when it is durable (written,
    /// flushed to disk, renamed into place, directory flushed). Does nothing for an in-memory
    /// store or when nothing changed.
    ///
    /// ```swift
    /// settings.volume = 0.8
    /// try await SettingsStore.shared.flush()   // on disk now
    /// ```
    ///
    /// - Throws: ``SettingsError``: ``SettingsError/Code/fileLocked`` when another process held
    ///   the file's lock for longer than ``PersistenceOptions/lockTimeout``, or
    ///   ``SettingsError/Code/invalidFile`` naming the file and the reason (its directory cannot
    ///   be created, the disk is full, permission denied, or the file cannot be read and so is
    ///   left alone). The unsaved changes are kept and saved by a later flush or autosave.
    public nonisolated func flush() async throws(SettingsError) {
        guard let backend else { return }  // an in-memory store has nothing to save
        try await flush(backend)
    }

    /// ``flush()`` isolated to the backend: on the store's persistence thread.
    private func flush(_ backend: isolated FileBackend) async throws(SettingsError) {
        loadIfNeeded(backend)  // the wait for another process starts once the file is loaded
        var retry = FlushRetry(self)
        while let pause = try retry.pause(after: saveOnce(backend)) {
            try? await Task.sleep(for: pause)
        }
    }

    /// ``flush()`` for synchronous code: writes every change made so far and returns when it is
    /// durable, blocking the calling thread meanwhile (the wait for another process's lock is
    /// bounded by ``PersistenceOptions/lockTimeout``). Do not call it from a task on Swift's
    /// cooperative pool: use ``flush()`` there.
    ///
    /// ```swift
    /// try store.flushNow()   // e.g. from a synchronous shutdown hook
    /// ```
    ///
    /// - Throws: ``SettingsError`` as ``flush()`` does.
    public nonisolated func flushNow() throws(SettingsError) {
        try flushNow(waitingAtMost: nil)
    }

    /// ``flushNow()`` whose wait for another process's lock is bounded by `limit` instead of
    /// the store's own ``PersistenceOptions/lockTimeout`` (`nil`: the store's): the termination
    /// save waits as long as its caller allowed.
    nonisolated func flushNow(waitingAtMost limit: Duration?) throws(SettingsError) {
        guard let backend else { return }
        ensureLoaded()  // the wait for another process starts once the file is loaded
        var retry = FlushRetry(self, limit: limit)
        while let pause = try retry.pause(after: backend.executor.run { () throws(SettingsError) in try backend.onThread { (b) throws(SettingsError) in try self.saveOnce(b) } }) {
            pauseThread(for: pause)
        }
    }
}

/// The one retry rule of ``SettingsStore/flush()`` and ``SettingsStore/flushNow()``: how long
/// to pause after each save attempt, and the bound on how long a flush waits for another process.
struct FlushRetry {
    let start = ContinuousClock.now
    /// The longest a flush waits: the lock timeout plus twice the settle delay.
    let limit: Duration
    /// The store, for the file's path in a failure (asked only then: `URL.path` is not free).
    let store: SettingsStore
    /// The next pause while the lock is busy (1 ms, doubling up to 10 ms).
    var busyPause = Duration.milliseconds(1)

    init(_ store: SettingsStore, limit: Duration? = nil) {
        self.limit = limit ?? Self.limit(of: store)
        self.store = store
    }

    /// The longest `store`'s flush waits by its own options: its lock timeout plus twice its
    /// settle delay (no allocation: the exit saver asks it on the write path).
    static func limit(of store: SettingsStore) -> Duration {
        (store.persistence?.lockTimeout ?? .seconds(2)) + (store.persistence?.settleDelay ?? .zero) * 2
    }

    /// How long to pause before the next attempt, or `nil` when the flush is done.
    ///
    /// - Parameter step: what the last attempt did.
    /// - Throws: ``SettingsError`` once the limit has passed with the lock still busy
    ///   (``SettingsError/Code/fileLocked``, naming the lock) or the file still settling.
    mutating func pause(after step: SaveResult) throws(SettingsError) -> Duration? {
        switch step {
        case .nothing, .saved:
            return nil
        case .busy(let lock):
            try check(lockedBy: lock)
            defer { busyPause = min(busyPause * 2, .milliseconds(10)) }
            return busyPause
        case .settling(let wait):
            try check(lockedBy: nil)
            return wait
        }
    }

    /// Throws once the limit has passed; `lock` is the lock file to name (`nil` when the file was
    /// settling rather than locked).
    private func check(lockedBy lock: String?) throws(SettingsError) {
        guard ContinuousClock.now - start > limit else { return }
        let path = store.url?.path ?? "?"
        if let lock {
            throw SettingsError(.fileLocked, path: path, detail: "another process held the lock \(lock) for longer than \(limit); not saved, the changes are kept and saved later")
        }
        throw SettingsError(.invalidFile, path: path, detail: "the file kept changing into something malformed for longer than \(limit); not saved, the changes are kept")
    }
}

/// Sleeps the calling thread (only where blocking is allowed: synchronous flushes).
private func pauseThread(for duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
