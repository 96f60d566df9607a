import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization

extension SyncEngine {
    /// Runs `body`, closing the connection (which fails the query) if it takes longer than
    /// `limit` or the task is cancelled, and failing at once when the connection closes. Does not
    /// wait for an abandoned `body`: postgres-nio can leave a query written to a closed channel
    /// unanswered forever.
    static func timed<T: Sendable>(
        _ conn: PostgresConnection, _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        if Task.isCancelled || conn.isClosed { throw SyncConnectionError(description: "connection closed before \(what)") }
        let once = OneShot<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                once.set(continuation)
                // A closed connection fails the operation at once, even when postgres-nio never
                // answers a query written to the closing channel.
                let watch = CloseWatch.of(conn)
                let id = watch.add { once.resume(.failure(SyncConnectionError(description: "connection closed during \(what)"))) }
                // The deadline is a timer on the connection's event loop: one task per query, the body's.
                let (seconds, attoseconds) = limit.components
                let timer = conn.eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
                    if once.resume(.failure(SyncConnectionError(description: "\(what) timed out after \(limit)"))) { closeNow(conn) }
                }
                Task {
                    let result: Result<T, any Error>
                    do { result = .success(try await body()) } catch { result = .failure(error) }
                    once.resume(result)
                    timer.cancel()
                    watch.remove(id)
                }
            }
        } onCancel: {
            if once.resume(.failure(CancellationError())) { closeNow(conn) }
        }
    }

    /// The server must have this schema version, installed by `settings-sync-admin install`.
    static func checkSchema(_ conn: PostgresConnection, _ logger: Logger) async throws {
        let exists = try await conn.query("SELECT to_regclass('settings_sync.settings_sync_meta') IS NOT NULL", logger: logger)
            .decode(Bool.self).reduce(into: false) { $0 = $1 }
        guard exists else { throw SettingsSyncError.schemaMismatch(found: 0, expected: SyncSchema.version) }
        let version = try await conn.query("SELECT coalesce(max(version), 0) FROM settings_sync.settings_sync_meta", logger: logger)
            .decode(Int32.self).reduce(into: Int32(0)) { $0 = $1 }
        if version != SyncSchema.version {
            throw SettingsSyncError.schemaMismatch(found: Int(version), expected: SyncSchema.version)
        }
    }

    /// Starts `LISTEN` on the space's secret channel; its notifications (and its end) become
    /// events, coalesced: at most one waits while the engine pulls, so a flood costs one pull.
    static func listen(
        _ conn: PostgresConnection, _ channel: String, _ gen: Int, _ events: AsyncStream<SyncEvent>.Continuation, _ sync: SettingsSync
    ) -> Task<Void, Never> {
        Task {
            do {
                try await conn.listen(on: channel) { notifications in
                    events.yield(.listening(gen))
                    for try await n in notifications {
                        if sync.queueNotify(n.payload) { events.yield(.notify(gen)) }
                    }
                }
                events.yield(.lost(gen, "notifications ended"))
            } catch {
                events.yield(.lost(gen, Self.describe(error)))
            }
        }
    }

    /// Closes the connection without waiting: its pending queries fail.
    static func closeNow(_ conn: PostgresConnection) {
        let _: EventLoopFuture<Void> = conn.close()
    }

    /// One line, no secrets: PostgreSQL's message when there is one.
    static func describe(_ error: any Error) -> String {
        if let e = error as? PSQLError {
            if let message = e.serverInfo?[.message] {
                return "\(message) (\(e.serverInfo?[.sqlState] ?? "?"))"
            }
            if let underlying = e.underlying { return "\(e.code): \(describe(underlying))" }
            return "\(e.code)"
        }
        if let e = error as? SettingsSyncError { return e.description }
        return String(describing: error).replacingOccurrences(of: "\n", with: " ")
    }
}
