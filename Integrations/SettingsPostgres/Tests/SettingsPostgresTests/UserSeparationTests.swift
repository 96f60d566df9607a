import Crypto
import Foundation
import Logging
import PostgresNIO
import Settings
import Synchronization
import SettingsPlist
import Testing
@testable import SettingsPostgres

/// The SQLSTATE a statement fails with, or `nil` when it succeeds.
func sqlState(_ body: () async throws -> Void) async -> String? {
    do {
        try await body()
        return nil
    } catch let error as PSQLError {
        return error.serverInfo?[.sqlState] ?? "connection"
    } catch {
        return "other"
    }
}

/// Each user's settings are sealed off by PostgreSQL: users made by `settings-sync-admin add-user`,
/// checked through the library and through hand-written SQL.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(2)))
struct UserSeparationTests {
    let logger = Logger(label: "tests")

    @Test func userBCannotReadChangeDeleteNotifyOrObserveUserA() async throws {
        let app = uniqueApp()
        let userA = try await TestServer.makeUser("a"), userB = try await TestServer.makeUser("b")
        let a = try TestDevice(app: app, url: userA.url)
        let b = try TestDevice(app: app, url: userB.url)
        a.store["Account/name"] = "ada"
        a.store["theme"] = "dark"
        try await a.synchronize()
        try await b.synchronize()
        // Through the library: B's device sees nothing of A's, and B's write does not reach A.
        #expect(b.store.contents(of: .user).isEmpty)
        b.store["theme"] = "light"
        try await b.synchronize()
        try await a.synchronize()
        #expect(a.store.value(for: "theme", in: .user) == "dark")
        #expect(b.store.value(for: "Account/name", in: .user) == nil)

        // A's channel and rows, as the administrator sees them.
        let (aChannel, aRows) = try await withTestConnection(superuser: true) { conn in
            let channel = try await conn.query("SELECT channel FROM settings_sync.settings_sync_spaces WHERE owner = \(userA.name)::text::name", logger: logger)
                .decode(String.self).reduce(into: "") { $0 = $1 }
            let rows = try await conn.query("SELECT count(*)::int FROM settings_sync.settings_sync_entries WHERE owner = \(userA.name)::text::name", logger: logger)
                .decode(Int.self).reduce(into: 0) { $0 = $1 }
            return (channel, rows)
        }
        #expect(aRows == 2)

        // Through raw SQL as B.
        let b2 = (name: userB.name, password: userB.password)
        try await withTestConnection(user: b2) { conn in
            for table in ["settings_sync.settings_sync_spaces", "settings_sync.settings_sync_entries", "settings_sync.settings_sync_devices"] {
                let owners = try await conn.query(PostgresQuery(unsafeSQL: "SELECT DISTINCT owner::text FROM \(table)"), logger: logger)
                    .decode(String.self).reduce(into: [String]()) { $0.append($1) }
                #expect(owners.allSatisfy { $0 == userB.name }, "\(table) shows \(owners)")
            }
            let channels = try await conn.query("SELECT channel FROM settings_sync.settings_sync_spaces", logger: logger)
                .decode(String.self).reduce(into: [String]()) { $0.append($1) }
            #expect(!channels.contains(aChannel))
            let aName = userA.name
            let writes = [
                "UPDATE settings_sync.settings_sync_entries SET value = NULL WHERE owner = '\(aName)'",
                "DELETE FROM settings_sync.settings_sync_entries WHERE owner = '\(aName)'",
                "INSERT INTO settings_sync.settings_sync_entries (owner, app, key, value, hlc, device, seq) VALUES ('\(aName)', '\(app)', 'theme', NULL, 9223372036854775807, gen_random_uuid(), 99)",
                "UPDATE settings_sync.settings_sync_spaces SET seq = 0",
                "DELETE FROM settings_sync.settings_sync_spaces",
                "INSERT INTO settings_sync.settings_sync_spaces (owner, app) VALUES ('\(aName)', 'x')",
                "TRUNCATE settings_sync.settings_sync_entries",
                "DELETE FROM settings_sync.settings_sync_devices",
                "UPDATE settings_sync.settings_sync_meta SET version = 1",
                "SELECT settings_sync.settings_sync_purge('0 days')",
            ]
            for sql in writes {
                let state = await sqlState { for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql), logger: logger) {} }
                #expect(state == "42501", "\(sql) gave \(state ?? "success")")
            }
            // Every function B may call works on B's space only: the owner comes from the session.
            let hlc = (Int64(Date().timeIntervalSince1970 * 1000)) << 16
            let keys = ["theme"], values = [ByteBuffer(bytes: try PlistValue.string("pwned").encodedBytes(as: .binary))]
            try await conn.query("""
                SELECT * FROM settings_sync.settings_sync_push(\(app), \(UUID()), \(keys), \(values), \([hlc + 1_000_000]), \([false]))
                """, logger: logger)
            let opened = try await conn.query("SELECT channel FROM settings_sync.settings_sync_open(\(app))", logger: logger)
                .decode(String.self).reduce(into: "") { $0 = $1 }
            #expect(opened != aChannel && opened.hasPrefix("settings_sync_") && opened.count == 46)
            try await conn.query("SELECT settings_sync.settings_sync_check_in(\(app), \(UUID()), 1)", logger: logger)
        }
        try await a.synchronize()
        #expect(a.store.value(for: "theme", in: .user) == "dark")
        let aAfter = try await withTestConnection(superuser: true) { conn in
            try await conn.query("SELECT count(*)::int FROM settings_sync.settings_sync_entries WHERE owner = \(userA.name)::text::name AND value IS NOT NULL", logger: logger)
                .decode(Int.self).reduce(into: 0) { $0 = $1 }
        }
        #expect(aAfter == 2)

        // Observing: A's notifications carry only a change number, on A's secret channel; B,
        // listening on the old shared channel, hears nothing of A's push (its own marker, sent
        // after A's push committed, arrives first and alone).
        try await withTestConnection(user: (userA.name, userA.password)) { aConn in
            try await withTestConnection(user: b2) { bConn in
                try await aConn.listen(on: aChannel) { aNotes in
                    try await bConn.listen(on: "settings_sync") { bNotes in
                        a.store["theme"] = "darker"
                        try await a.synchronize()
                        var aIterator = aNotes.makeAsyncIterator()
                        let note = try #require(try await aIterator.next())
                        #expect(Int64(note.payload) != nil, "payload \(note.payload)")
                        try await bConn.query("SELECT pg_notify('settings_sync', 'marker')", logger: logger)
                        var bIterator = bNotes.makeAsyncIterator()
                        #expect(try await bIterator.next()?.payload == "marker")
                    }
                }
            }
        }

        // A role with no grants sees nothing and can call nothing.
        let nobody = "nobody_\(UUID().uuidString.prefix(8).lowercased())"
        try await withTestConnection(superuser: true) { conn in
            try await conn.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(nobody) LOGIN PASSWORD 'nobody'"), logger: logger)
        }
        try await withTestConnection(user: (nobody, "nobody")) { conn in
            let statements = SyncSchema.tables.map { "SELECT count(*) FROM settings_sync.\($0)" } + [
                "SELECT * FROM settings_sync.settings_sync_open('x')",
                "SELECT settings_sync.settings_sync_check_in('x', gen_random_uuid(), 1)",
                "SELECT * FROM settings_sync.settings_sync_push('x', gen_random_uuid(), '{}', '{}', '{}', '{}')",
                "SELECT settings_sync.settings_sync_purge('0 days')",
            ]
            for sql in statements {
                let state = await sqlState { for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql), logger: logger) {} }
                #expect(state == "42501", "\(sql) gave \(state ?? "success")")
            }
        }

        // The admin tool's check passes and lists both users; removing B removes its rows.
        let admin = try SettingsSyncAdmin(url: TestServer.adminURL, password: TestServer.adminPassword)
        let report = try await admin.check()
        #expect(report.contains { $0.hasPrefix("user \(userA.name) ") })
        #expect(report.contains { $0.hasPrefix("user \(userB.name) ") })
        #expect(try await admin.removeUser(userB.name) >= 1)
        let bRows = try await withTestConnection(superuser: true) { conn in
            try await conn.query("SELECT count(*)::int FROM settings_sync.settings_sync_entries WHERE owner = \(userB.name)::text::name", logger: logger)
                .decode(Int.self).reduce(into: 0) { $0 = $1 }
        }
        #expect(bRows == 0)
        await a.stop(); await b.stop()
    }

    @Test func aFloodOfNotificationsCostsOnePull() async throws {
        let user = try await TestServer.makeUser("flood")
        let app = uniqueApp()
        let a = try TestDevice(app: app, url: user.url)
        a.store["k"] = 1
        try await a.synchronize()
        let before = a.sync.pullCount.load(ordering: .relaxed)
        let heardBefore = a.sync.notificationCount.load(ordering: .relaxed)
        try await withTestConnection(user: (user.name, user.password)) { conn in
            let channel = try await conn.query("SELECT channel FROM settings_sync.settings_sync_spaces WHERE app = \(app)", logger: logger)
                .decode(String.self).reduce(into: "") { $0 = $1 }
            // Distinct payloads (PostgreSQL folds identical ones), each ahead of the device's cursor.
            try await conn.query("SELECT count(pg_notify(\(channel), (1000000 + g)::text)) FROM generate_series(1, 5000) g", logger: logger)
        }
        while a.sync.notificationCount.load(ordering: .relaxed) < heardBefore + 5000 {   // until all arrived
            try await Task.sleep(for: .milliseconds(10))   // polling pace; the suite's time limit bounds it
        }
        a.store["k"] = 2
        try await a.synchronize()
        let pulls = a.sync.pullCount.load(ordering: .relaxed) - before
        #expect(pulls < 20, "\(pulls) pulls for 5,000 notifications")
        await a.stop()
    }

    @Test func installIsIdempotentAndCheckFindsALoosenedPolicy() async throws {
        let admin = try SettingsSyncAdmin(url: TestServer.adminURL, password: TestServer.adminPassword)
        try await admin.install()
        try await admin.install()
        _ = try await admin.check()
        try await withTestConnection(superuser: true) { conn in
            try await conn.query("ALTER TABLE settings_sync.settings_sync_entries NO FORCE ROW LEVEL SECURITY", logger: logger)
        }
        await #expect(throws: SettingsSyncError.self) { _ = try await admin.check() }
        try await admin.install()
        _ = try await admin.check()
    }

    @Test func secretsAreSealedEndToEndOrNotPushedAtAll() async throws {
        let user = try await TestServer.makeUser("s")
        let key = SymmetricKey(size: .bits256)
        let secrets = SettingsSyncSecrets.encrypted(with: key).marking([.secret("Session")])
        let app = uniqueApp()
        let a = try TestDevice(app: app, url: user.url, secrets: secrets)
        let b = try TestDevice(app: app, url: user.url, secrets: secrets)
        a.store["Account/apiToken"] = "tok-3e1f9c8a-SECRET"
        a.store["Session/cookie"] = "cookie-77ad-SECRET"
        a.store["plain"] = "visible"
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "Account/apiToken", in: .user) == "tok-3e1f9c8a-SECRET")
        #expect(b.store.value(for: "Session/cookie", in: .user) == "cookie-77ad-SECRET")
        let dump = try await withTestConnection(superuser: true) { conn in
            var all = ""
            for table in SyncSchema.tables {
                for try await row in try await conn.query(PostgresQuery(unsafeSQL: "SELECT t::text FROM settings_sync.\(table) t"), logger: logger).decode(String.self) {
                    all += row + "\n"
                }
            }
            for try await value in try await conn.query("SELECT value FROM settings_sync.settings_sync_entries WHERE value IS NOT NULL", logger: logger).decode(ByteBuffer.self) {
                all += String(decoding: value.readableBytesView, as: UTF8.self) + "\n"
            }
            return all
        }
        #expect(dump.contains("Account/apiToken"))   // the key is not secret; its value is
        #expect(!dump.contains("SECRET"))
        #expect(!dump.contains(Data("tok-3e1f9c8a".utf8).base64EncodedString().prefix(12)))

        // A device without the key reports each secret once and keeps its own value.
        let c = try TestDevice(app: app, url: user.url)
        var problems = c.sync.problems.makeAsyncIterator()
        c.store["Account/apiToken"] = "mine"
        try await c.synchronize()
        var reported: Set<String> = []
        for _ in 0..<2 {
            if case .secretNotSynced(let k) = try #require(await problems.next()) { reported.insert(k) }
        }
        #expect(reported == ["Account/apiToken", "Session/cookie"])
        try await c.synchronize()
        #expect(c.sync.reportedCounts.problems == 2)
        #expect(c.store.value(for: "Account/apiToken", in: .user) == "mine")
        #expect(c.store.value(for: "plain", in: .user) == "visible")

        // Without encryption a secret is never pushed.
        let app2 = uniqueApp()
        let d = try TestDevice(app: app2, url: user.url, secrets: .notSynced.marking([.secret("Session")]))
        d.store["Account/password"] = "hunter2-SECRET"
        d.store["Session/id"] = "cookie-SECRET"
        d.store["shown"] = 1
        try await d.synchronize()
        let keys = try await withTestConnection(user: (user.name, user.password)) { conn in
            try await conn.query("SELECT key FROM settings_sync.settings_sync_entries WHERE app = \(app2)", logger: logger)
                .decode(String.self).reduce(into: [String]()) { $0.append($1) }
        }
        #expect(keys == ["shown"])
        await a.stop(); await b.stop(); await c.stop(); await d.stop()
    }

    @Test func aConflictOnAMarkedSecretKeyShowsNeitherValue() async throws {
        let user = try await TestServer.makeUser("c")
        let secrets = SettingsSyncSecrets.encrypted(with: SymmetricKey(size: .bits256)).marking([.secret("Session")])
        let app = uniqueApp()
        let dirB = try TemporaryDirectory()
        let a = try TestDevice(app: app, url: user.url, secrets: secrets)
        let offlineB = try TestDevice(app: app, dir: dirB, url: user.url, secrets: secrets, start: false)
        offlineB.store["Session/cookie"] = "b-cookie-value"
        try await offlineB.store.flush()
        a.store["Session/cookie"] = "a-cookie-value"
        try await a.synchronize()
        let b = try TestDevice(app: app, dir: dirB, url: user.url, secrets: secrets)
        var conflicts = b.sync.conflicts.makeAsyncIterator()
        try await b.synchronize()
        let conflict = try #require(await conflicts.next())
        #expect(conflict.key.isSecret)
        #expect(!conflict.description.contains("cookie-value"), "\(conflict.description)")
        await a.stop(); await b.stop()
    }

    @Test func conflictOnASecretKeyDoesNotShowItsValues() {
        let conflict = SettingsSyncConflict(
            key: .secret("Session/cookie"), keptValue: "kept-value", lostValue: "lost-value", keptDevice: UUID(),
            lostDevice: UUID(), keptClock: 1 << 16, lostClock: 0, thisDeviceLost: true)
        #expect(!conflict.description.contains("kept-value"))
        #expect(!conflict.description.contains("lost-value"))
    }
}
