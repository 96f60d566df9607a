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

extension SettingsStore {
    /// Saves the unsaved changes of every file store in the process, concurrently, and returns
    /// when they are durable or when `timeout` has passed, whichever comes first.
    ///
    /// Each store saves on its own thread as ``flush()`` does (waiting at most its own lock
    /// timeout for another process); stores without unsaved changes are skipped. Call it before a
    /// planned shutdown: a server's graceful-shutdown hook, or after the last request. Nothing
    /// waits longer than `timeout`: a store still saving then (a stalled disk) goes on saving in
    /// the background, and is named in the error.
    ///
    /// ```swift
    /// try await SettingsStore.flushAll(timeout: .seconds(5))
    /// ```
    ///
    /// - Parameter timeout: the longest the call waits for all the saves together.
    /// - Throws: ``SettingsError`` naming every store that could not be saved and why (its own
    ///   error, or "still saving" when the time ran out); its ``SettingsError/code`` is the one
    ///   failure's code when only one store failed, ``SettingsError/Code/invalidFile`` otherwise.
    ///   Their changes are kept and saved by a later flush or autosave.
    public static func flushAll(timeout: Duration) async throws(SettingsError) {
        let stores = PendingSaves.all()
        guard !stores.isEmpty else { return }
        let round = SaveRound(stores)
        let outcome = await round.finish(within: timeout)
        if let error = outcome.error(within: timeout) { throw error }
    }

    /// Saves the unsaved changes of every file store in the process: ``flushAll(timeout:)``
    /// bounded only by each store's own lock timeout.
    ///
    /// ```swift
    /// try await SettingsStore.flushAll()
    /// ```
    ///
    /// - Throws: ``SettingsError`` as ``flushAll(timeout:)`` does; the other stores are still saved.
    public static func flushAll() async throws(SettingsError) {
        try await flushAll(timeout: .seconds(3600))
    }

    /// Saves every store's unsaved changes when the process is asked to terminate (`SIGTERM`,
    /// `SIGINT`, `SIGHUP` by default), then lets the signal's default action end the process.
    ///
    /// Without it, a signal whose action is the default ends the process at once: the exit
    /// hook does not run, and every write not yet saved (the autosave runs 50 ms after a change)
    /// is lost, though the file itself is always whole. Daemons are stopped with `SIGTERM`
    /// (systemd, container runtimes, `kill`), terminals send `SIGINT` and `SIGHUP`: a server
    /// should call this once at start-up.
    ///
    /// The signals are received through a `DispatchSource` (the process-level handler only
    /// wakes it: no lock, no allocation in signal context). On the first of them, every store
    /// with unsaved changes is saved as ``flushAll(timeout:)`` does, failures go to the stores'
    /// diagnostics handlers, then the signal's action is reset to the default and the signal is
    /// raised again, so the process ends as it would have (its exit status says which signal).
    /// Calling it again changes nothing. A program that handles these signals itself should
    /// call ``flushAll(timeout:)`` from its own handling instead.
    ///
    /// ```swift
    /// @main struct Server {
    ///     static func main() async throws {
    ///         SettingsStore.saveOnTermination()
    ///         try await serve()
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - signals: the signals that save before ending the process (`nil`: `SIGTERM`, `SIGINT`
    ///     and `SIGHUP`).
    ///   - timeout: the longest the saves may take together before the process ends anyway.
    public static func saveOnTermination(signals: [Int32]? = nil, timeout: Duration = .seconds(5)) {
        TerminationSaver.shared.install(signals: signals ?? [SIGTERM, SIGINT, SIGHUP], timeout: timeout)
    }
}
