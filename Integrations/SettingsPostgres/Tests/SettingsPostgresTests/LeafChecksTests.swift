import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Testing
@testable import SettingsPostgres

/// Every leaf is checked before it is pushed, as pulled rows are; the space total is kept on the
/// server and on each device, so one bad key or one huge batch never stops or breaks the rest.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(3)))
struct LeafChecksTests {
    let logger = Logger(label: "tests")

    @Test func badKeysStayLocalReportedOnceAndTheRestSyncs() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app), b = try TestDevice(app: app)
        let bad = [SettingsKey(components: [""]), SettingsKey(components: ["a\u{0}b"]),
                   SettingsKey(components: ["x\ny"]), SettingsKey(components: ["ctl\u{1}"])]
        var problems = a.sync.problems.makeAsyncIterator()
        for (i, key) in bad.enumerated() { a.store[key] = PlistValue(i) }
        a.store["ok"] = "synced"
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "ok", in: .user) == "synced")
        var reported: Set<String> = []
        for _ in bad {
            if case .badKey(let key, _) = try #require(await problems.next()) { reported.insert(key) }
        }
        #expect(reported == Set(bad.map(\.path)))
        a.store["ok2"] = "also"
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "ok2", in: .user) == "also")
        #expect(a.sync.reportedCounts.problems == bad.count)
        #expect(b.sync.reportedCounts.problems == 0)
        await a.stop(); await b.stop()
    }

    @Test func theServerRefusesAPushOverTheSpaceTotal() async throws {
        let user = try await TestServer.makeUser("full")
        let app = uniqueApp()
        let value = ByteBuffer(bytes: [UInt8](repeating: 7, count: 250_000))
        let count = SyncLimits.spaceBytes / 250_000 + 1
        let hlc = Int64(Date().timeIntervalSince1970 * 1000) << 16
        let state = await sqlState {
            try await withTestConnection(user: (user.name, user.password)) { conn in
                let rows = try await conn.query("""
                    SELECT change_seq FROM settings_sync.settings_sync_push(\(app), \(UUID()), \((0..<count).map { "k\($0)" }),
                      \(Array(repeating: value, count: count)), \(Array(repeating: hlc, count: count)), \(Array(repeating: false, count: count)))
                    """, logger: logger)
                for try await _ in rows.decode(Int64.self) {}   // the error arrives with the rows
            }
        }
        #expect(state == "53400")
        let stored = try await withTestConnection(superuser: true) { conn in
            try await conn.query("SELECT count(*)::int FROM settings_sync.settings_sync_entries WHERE owner = \(user.name)::text::name", logger: logger)
                .decode(Int.self).reduce(into: 0) { $0 = $1 }
        }
        #expect(stored == 0)
    }

    @Test func aRoleHasAtMostItsQuotaOfSpaces() async throws {
        let user = try await TestServer.makeUser("many")
        let state = await sqlState {
            try await withTestConnection(user: (user.name, user.password)) { conn in
                for i in 0..<SyncLimits.spacesPerUser {
                    for try await _ in try await conn.query("SELECT channel FROM settings_sync.settings_sync_open(\("app\(i)"))", logger: logger) {}
                }
                #expect(await sqlState {   // an existing space still opens
                    for try await _ in try await conn.query("SELECT channel FROM settings_sync.settings_sync_open('app0')", logger: logger) {}
                } == nil)
                for try await _ in try await conn.query("SELECT channel FROM settings_sync.settings_sync_open('one too many')", logger: logger) {}
            }
        }
        #expect(state == "53400")
    }

    /// Regression (issue 30, item 7): 100,000 made-up device ids in 2 s made 21 MiB of rows while
    /// the user's counted bytes stayed 2. A space keeps its most recently seen devices only.
    @Test func madeUpDevicesNeverGrowASpacesDeviceRows() async throws {
        let user = try await TestServer.makeUser("devices")
        let app = uniqueApp()
        let last = UUID()
        let count = try await withTestConnection(user: (user.name, user.password)) { conn in
            for try await _ in try await conn.query("SELECT channel FROM settings_sync.settings_sync_open(\(app))", logger: logger) {}
            for i in 0..<(SyncLimits.devicesPerSpace + 50) {
                try await conn.query("SELECT settings_sync.settings_sync_check_in(\(app), \(i == SyncLimits.devicesPerSpace + 49 ? last : UUID()), 1)", logger: logger)
            }
            return try await conn.query("SELECT count(*)::int, count(*) FILTER (WHERE device = \(last))::int FROM settings_sync.settings_sync_devices WHERE app = \(app)", logger: logger)
                .decode((Int, Int).self).reduce(into: (0, 0)) { $0 = $1 }
        }
        #expect(count.0 == SyncLimits.devicesPerSpace)
        #expect(count.1 == 1)
    }

    @Test func aDeviceNeitherPushesNorAppliesMoreThanTheFileCanHold() async throws {
        let app = uniqueApp()
        let count = SyncLimits.clientSpaceBytes / 250_000 + 10
        // Pushing: the leaves past the total stay local, reported; the others sync.
        let a = try TestDevice(app: app)
        for i in 0..<count { a.store["Blob/\(i)"] = .data(Data(repeating: UInt8(i % 256), count: 250_000)) }
        try await a.synchronize()
        #expect(a.sync.reportedCounts.problems >= 1)
        let stored = try await withTestConnection(superuser: true) { conn in
            try await conn.query("SELECT coalesce(sum(octet_length(key) + octet_length(value)), 0)::bigint FROM settings_sync.settings_sync_entries WHERE owner = 'settings' AND app = \(app)", logger: logger)
                .decode(Int64.self).reduce(into: Int64(0)) { $0 = $1 }
        }
        #expect(stored > 0 && stored <= Int64(SyncLimits.clientSpaceBytes))
        await a.stop()

        // Applying: rows planted past the total (as another client could) are not applied, and
        // the settings file still loads.
        try await withTestConnection(superuser: true) { conn in
            let hlc = Int64(Date().timeIntervalSince1970 * 1000) << 16
            try await conn.query("""
                UPDATE settings_sync.settings_sync_spaces SET seq = seq + 1 WHERE owner = 'settings' AND app = \(app)
                """, logger: logger)
            let value = ByteBuffer(bytes: try PlistValue.data(Data(repeating: 1, count: 250_000)).encodedBytes(as: .binary))
            for i in 0..<count {
                try await conn.query("""
                    INSERT INTO settings_sync.settings_sync_entries (owner, app, key, value, hlc, device, seq)
                    SELECT 'settings', \(app), \("Planted/\(i)"), \(value), \(hlc), \(UUID()), seq
                      FROM settings_sync.settings_sync_spaces WHERE owner = 'settings' AND app = \(app)
                    """, logger: logger)
            }
        }
        let b = try TestDevice(app: app)
        var problems = b.sync.problems.makeAsyncIterator()
        try await b.synchronize()
        guard case .spaceFull = try #require(await problems.next()) else {
            Issue.record("expected spaceFull")
            return
        }
        await b.stop()
        let reopened = SettingsStore.file(b.dir.appending(path: "settings.plist"))
        #expect(reopened.loadError == nil)
        #expect(reopened.contents(of: .user)["Blob"] != nil)
    }
}
