public import Logging
public import ServiceLifecycle
public import Settings

/// A swift-service-lifecycle `Service` that saves settings on graceful shutdown: the answer to
/// SIGTERM for programs that run a `ServiceGroup`.
///
/// It does nothing until the group shuts down gracefully (or is cancelled); then it saves the
/// unsaved changes of every file store in the process (``SettingsStore/flushAll(timeout:)``),
/// waiting at most `timeout`, and returns. A save that does not finish in time goes on in the
/// background; it and any save that fails are logged and thrown.
///
/// ```swift
/// let group = ServiceGroup(configuration: .init(
///     services: [.init(service: server), .init(service: SettingsStoreService(logger: logger))],
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger))
/// try await group.run()
/// ```
public struct SettingsStoreService: Service {
    /// How long the saves may take, all together.
    public let timeout: Duration
    /// Where failures and timeouts are logged.
    public let logger: Logger

    /// A service that saves every store's changes at shutdown.
    ///
    /// - Parameters:
    ///   - timeout: how long the saves may take, all together (default 5 s).
    ///   - logger: where failures and timeouts are logged.
    public init(timeout: Duration = .seconds(5), logger: Logger = Logger(label: "settings")) {
        self.timeout = timeout
        self.logger = logger
    }

    /// Waits for graceful shutdown (or cancellation), then saves every store's changes.
    ///
    /// - Throws: ``SettingsError`` as ``flush()`` does.
    public func run() async throws {
        try? await gracefulShutdown()
        try await flush()
    }

    /// Saves every file store's unsaved changes within ``timeout``.
    ///
    /// - Throws: ``SettingsError`` naming every store that could not be saved (see
    ///   ``SettingsStore/flushAll(timeout:)``), after logging it.
    public func flush() async throws(SettingsError) {
        do {
            try await SettingsStore.flushAll(timeout: timeout)
        } catch {
            logger.error("settings not saved at shutdown: \(error)")
            throw error
        }
    }
}
