#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Logging
public import ServiceLifecycle
public import Settings
import Synchronization

/// A swift-service-lifecycle `Service` that saves settings on graceful shutdown: the answer to
/// SIGTERM for programs that run a `ServiceGroup`.
///
/// It does nothing until the group shuts down gracefully (or is cancelled); then it saves the
/// unsaved changes of its stores, each within `timeout`, and returns. A save that does not finish
/// in time is logged and left to finish on its own (the store's lock timeout bounds it too).
///
/// ```swift
/// let group = ServiceGroup(configuration: .init(
///     services: [.init(service: server), .init(service: SettingsStoreService(logger: logger))],
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger))
/// try await group.run()
/// ```
public struct SettingsStoreService: Service {
    /// The stores saved at shutdown.
    public let stores: [SettingsStore]
    /// How long each store's save may take.
    public let timeout: Duration
    /// Where failures and timeouts are logged.
    public let logger: Logger

    /// A service that saves `stores` at shutdown.
    ///
    /// - Parameters:
    ///   - stores: the stores (default: ``SettingsStore/shared``).
    ///   - timeout: how long each store's save may take (default 5 s).
    ///   - logger: where failures and timeouts are logged.
    public init(stores: [SettingsStore] = [.shared], timeout: Duration = .seconds(5), logger: Logger = Logger(label: "settings")) {
        self.stores = stores
        self.timeout = timeout
        self.logger = logger
    }

    /// Waits for graceful shutdown (or cancellation), then saves every store's changes.
    public func run() async throws {
        try? await gracefulShutdown()
        try await flush()
    }

    /// Saves every store's unsaved changes, each within ``timeout``.
    ///
    /// - Throws: the first ``SettingsError`` met (``SettingsError/Code/fileLocked`` for a save that
    ///   did not finish in time); the other stores are still saved.
    public func flush() async throws(SettingsError) {
        var first: SettingsError?
        for store in stores {
            do {
                try await Self.flush(store, within: timeout)
            } catch {
                logger.error("settings not saved at shutdown: \(error)", metadata: ["settings.file": "\(store.url?.path ?? "in memory")"])
                if first == nil { first = error }
            }
        }
        if let first { throw first }
    }

    /// Saves `store`, returning at the latest after `timeout` (the save goes on in the background).
    static func flush(_ store: SettingsStore, within timeout: Duration) async throws(SettingsError) {
        let outcome = Mutex<CheckedContinuation<SettingsError?, Never>?>(nil)
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<SettingsError?, Never>) in
            outcome.withLock { $0 = continuation }
            let finish: @Sendable (SettingsError?) -> Void = { error in
                outcome.withLock { slot in
                    slot?.resume(returning: error)
                    slot = nil
                }
            }
            Task {
                do throws(SettingsError) {
                    try await store.flush()
                    finish(nil)
                } catch {
                    finish(error)
                }
            }
            Task {
                try? await Task.sleep(for: timeout)
                finish(SettingsError(.fileLocked, path: store.url?.path, detail: "not saved within \(timeout)"))
            }
        }
        if let error { throw error }
    }
}
