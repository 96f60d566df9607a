import Foundation
import Settings
import Testing
@testable import SettingsPostgres

/// Issue 30, items 6 and 12: a user's connection limit, and a device refused by it.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(2)))
struct ConnectionLimitTests {
    /// The default lets one user run 20 devices (one connection each, a few more while some
    /// reconnect) and still leaves most of a default server's 100 connections to the others.
    @Test func theDefaultLimitFitsTwentyDevicesAndAQuarterOfADefaultServer() {
        #expect(SettingsSyncAdmin.defaultConnectionLimit >= 20 + 2)
        #expect(SettingsSyncAdmin.defaultConnectionLimit * 4 <= 100 - 3)   // 3: superuser_reserved_connections
    }

    /// A device over its user's connection limit is offline with PostgreSQL's reason (53300) and
    /// tries again with backoff (100 ms doubling to 2 s, ±20 %), never in a tight loop; it comes
    /// online once a connection is free.
    @Test func aDeviceOverTheLimitBacksOffAndComesOnlineWhenASlotFrees() async throws {
        let name = "conn1_\(UUID().uuidString.prefix(8).lowercased())", password = UUID().uuidString
        try await SettingsSyncAdmin(url: TestServer.adminURL, password: TestServer.adminPassword)
            .addUser(name, password: password, connectionLimit: 1)
        let url = TestServer.url(user: name, password: password)
        let app = uniqueApp()
        let a = try TestDevice(app: app, url: url)
        a.store["k"] = "from A"
        try await a.synchronize()

        let b = try TestDevice(app: app, url: url)
        var statuses = b.sync.statusUpdates.makeAsyncIterator()
        var refusals: [ContinuousClock.Instant] = []
        var reasons: [String] = []
        while refusals.count < 5, let status = await statuses.next() {
            guard case .offline(let reason) = status else { continue }
            refusals.append(.now)
            reasons.append(reason)
        }
        #expect(refusals.count == 5)
        #expect(reasons.allSatisfy { $0.contains("53300") }, "\(reasons)")
        // Four pauses between five attempts: at least 0.8 × (100 + 200 + 400 + 800) ms. A slower
        // machine only makes it longer; a device without backoff takes milliseconds.
        if let first = refusals.first, let last = refusals.last {
            #expect(last - first >= .milliseconds(1_200), "5 refused attempts in \(last - first)")
        }

        await a.stop()
        try await b.synchronize()
        #expect(b.store.value(for: "k", in: .user) == "from A")
        await b.stop()
    }
}
