import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Settings
import SettingsPlist
import Testing
@testable import SettingsPostgres

/// `SettingsSync` is a swift-service-lifecycle `Service`.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(1)))
struct ServiceLifecycleTests {
    @Test func gracefulShutdownSendsPendingPushesBeforeRunReturns() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app, start: false)
        let group = ServiceGroup(configuration: .init(services: [a.sync], logger: Logger(label: "tests")))
        var statuses = a.sync.statusUpdates.makeAsyncIterator()
        let running = Task { try await group.run() }
        while let s = await statuses.next() {
            if case .upToDate = s { break }
        }
        a.store["written/just/before/shutdown"] = "kept"
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(a.sync.status == .stopped)
        let keys = try await withTestConnection { conn in
            try await conn.query("SELECT key FROM settings_sync.settings_sync_entries WHERE app = \(app)", logger: Logger(label: "tests"))
                .decode(String.self).reduce(into: [String]()) { $0.append($1) }
        }
        #expect(keys.contains("written/just/before/shutdown"))
    }
}
