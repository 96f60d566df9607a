import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization
import Testing
@testable import SettingsPostgres

/// Issue 30, item 10: a flood of notifications on a user's real channel, one statement each (so
/// they arrive spread over time, not at one commit), cost 54–199 pulls per 1,000. Pulls are
/// counted by the sync's own counter, never timed. Each test runs in a database of its own: a
/// test that ends every device session of the shared one would drop the notifications counted.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(3)))
struct NotificationFloodTests {
    let logger = Logger(label: "tests")

    /// Issue 30, item 10: 1,000 announcements of change numbers that were never handed out: a
    /// handful of pulls (the pace after a false one doubles from 250 ms to 8 s); a real change
    /// made afterwards still arrives through its notification.
    @Test func item10_aThousandForgedNotificationsCostAFewPulls() async throws {
        try await withPrivateDatabase { _, database in try await forgedFlood(database) }
    }

    func forgedFlood(_ database: String) async throws {
        let user = try await privateUser("fl", database)
        let app = uniqueApp()
        let a = try TestDevice(app: app, url: user.url)
        a.store["k"] = 1
        try await a.synchronize()
        let pulls = try await flood(user, app, a) { i in String(1_000_000 + i) }
        print("item 10: \(pulls) pulls for 1,000 forged notifications")
        #expect(pulls <= 12, "\(pulls) pulls for 1,000 forged notifications")

        let b = try TestDevice(app: app, url: user.url)
        b.store["k"] = 2
        try await b.synchronize()
        while a.store.value(for: "k", in: .user) != 2 {
            try await Task.sleep(for: .milliseconds(20))   // polling pace; the suite's time limit bounds it
        }
        await a.stop(); await b.stop()
    }

    /// Issue 30, item 10: announcements the device has already pulled past, and payloads that
    /// are not change numbers, cost no pull at all.
    @Test func item10_staleAndMalformedNotificationsCostNoPull() async throws {
        try await withPrivateDatabase { _, database in try await staleFlood(database) }
    }

    func staleFlood(_ database: String) async throws {
        let user = try await privateUser("fm", database)
        let app = uniqueApp()
        let a = try TestDevice(app: app, url: user.url)
        a.store["k"] = 1
        try await a.synchronize()
        let stale = try await flood(user, app, a) { i in i % 2 == 0 ? "1" : "0" }
        let malformed = try await flood(user, app, a) { i in "x\(i)" }
        #expect(stale == 0)
        #expect(malformed == 0)
        await a.stop()
    }

    /// Sends 1,000 notifications with `payload(i)` on the space's channel, one statement each, as
    /// the user; returns how many pulls the device made until it had heard them all.
    /// A new sync user, and its URL in `database`.
    func privateUser(_ prefix: String, _ database: String) async throws -> (name: String, password: String, url: String, database: String) {
        let user = try await TestServer.makeUser(prefix)
        return (user.name, user.password, "postgres://\(user.name):\(user.password)@127.0.0.1:\(TestServer.port)/\(database)", database)
    }

    func flood(_ user: (name: String, password: String, url: String, database: String), _ app: String, _ device: TestDevice,
               payload: (Int) -> String) async throws -> Int {
        let pullsBefore = device.sync.pullCount.load(ordering: .relaxed)
        let heardBefore = device.sync.notificationCount.load(ordering: .relaxed)
        try await withTestConnection(user: (user.name, user.password), database: user.database) { conn in
            let channel = try await conn.query("SELECT channel FROM settings_sync.settings_sync_spaces WHERE app = \(app)", logger: logger)
                .decode(String.self).reduce(into: "") { $0 = $1 }
            for i in 0..<1_000 {
                try await conn.query("SELECT pg_notify(\(channel), \(payload(i)))", logger: logger)
            }
        }
        while device.sync.notificationCount.load(ordering: .relaxed) < heardBefore + 1_000 {
            try await Task.sleep(for: .milliseconds(10))   // polling pace; the suite's time limit bounds it
        }
        return device.sync.pullCount.load(ordering: .relaxed) - pullsBefore
    }
}
