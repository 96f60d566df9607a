import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization
import Testing
@testable import SettingsPostgres

/// `settings-sync-admin install` and `check` on a live server: safe while devices sync, every wait
/// bounded, every failure naming its statement and the server's message. Each test has a database
/// of its own, since it locks or drops what other tests use.
@Suite(TestServer.enabled, .timeLimit(.minutes(2)))
struct SettingsSyncAdminTests {
    let logger = Logger(label: "tests")

    /// Regression: install's DDL locked the tables one by one (a SHARE lock on the entries for
    /// `CREATE INDEX`, then ACCESS EXCLUSIVE on the spaces for `ALTER TABLE`), while a push locks
    /// the space, then the entries: "deadlock detected (40P01)" for the install or a device, in about
    /// one install of three while devices pushed.
    @Test func installWhileDevicesSyncNeitherFailsNorFailsThem() async throws {
        try await withPrivateDatabase { admin, database in
            let user = try await TestServer.makeUser("inst")
            let devices = Devices()
            var installErrors: [String] = []
            let (started, starting) = AsyncStream<Void>.makeStream()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<3 {
                    group.addTask {
                        do {
                            try await withTestConnection(user: (user.name, user.password), database: database) { conn in
                                try await deviceLoop(conn, app: "install-\(worker)", devices) { starting.yield() }
                            }
                        } catch {
                            devices.errors.withLock { $0.append(String(reflecting: error)) }
                            starting.yield()
                        }
                    }
                }
                // Every install overlaps the devices' statements: all three push before the first
                // install, and go on until the last is done.
                var iterator = started.makeAsyncIterator()
                for _ in 0..<3 { await iterator.next() }
                for _ in 0..<20 {
                    do { try await admin.install() } catch { installErrors.append(String(describing: error)) }
                }
                devices.stop.store(true, ordering: .relaxed)
                try await group.waitForAll()
            }
            #expect(installErrors.isEmpty, "\(installErrors.count) of 20 installs failed: \(installErrors.first ?? "")")
            let deviceErrors = devices.errors.withLock { $0 }
            #expect(deviceErrors.isEmpty, "devices failed: \(deviceErrors)")
            #expect(devices.pushes.load(ordering: .relaxed) >= 15)
            _ = try await admin.check()
        }
    }

    @Test func installGivesUpOnALockedTableNamingTheStatement() async throws {
        try await withPrivateDatabase { admin, database in
            var admin = admin
            admin.lockWait = .seconds(1)
            let text = try await whileLocked(database, "LOCK TABLE settings_sync.settings_sync_entries IN ACCESS SHARE MODE") { try await admin.install() }
            #expect(text.contains("install (statement 4 of"), "\(text)")
            #expect(text.contains("canceling statement due to lock timeout (55P03)"), "\(text)")
            #expect(text.contains("LOCK TABLE settings_sync.settings_sync_entries IN ACCESS EXCLUSIVE MODE"), "\(text)")
            try await admin.install()   // nothing was half done: the schema is whole
            _ = try await admin.check()
        }
    }

    @Test func checkGivesUpOnALockedTableNamingTheStatement() async throws {
        try await withPrivateDatabase { admin, database in
            var admin = admin
            admin.lockWait = .seconds(1)
            let text = try await whileLocked(database, "LOCK TABLE settings_sync.settings_sync_spaces IN ACCESS EXCLUSIVE MODE") { _ = try await admin.check() }
            #expect(text.hasPrefix("settings-sync-admin: check failed: canceling statement due to lock timeout (55P03)"), "\(text)")
            #expect(text.contains("; statement: SELECT ") && text.contains("settings_sync_spaces"), "\(text)")
            _ = try await admin.check()
        }
    }

    @Test func checkNamesAMissingTableAndFunction() async throws {
        try await withPrivateDatabase { admin, database in
            try await withTestConnection(superuser: true, database: database) { conn in
                try await conn.query("DROP TABLE settings_sync.settings_sync_devices", logger: logger)
                try await conn.query("DROP FUNCTION settings_sync.settings_sync_check_in(text, uuid, bigint)", logger: logger)
            }
            let error = await #expect(throws: SettingsSyncError.self) { _ = try await admin.check() }
            let text = error.map { String(describing: $0) } ?? ""
            #expect(text.contains("settings_sync_devices: missing"), "\(text)")
            #expect(text.contains("settings_sync_check_in(text, uuid, bigint): missing"), "\(text)")
            try await admin.install()
            _ = try await admin.check()
        }
    }

    @Test func anUnreachableServerIsNamed() async throws {
        let admin = try SettingsSyncAdmin(url: "postgres://postgres@127.0.0.1:1/settings", password: "x")
        let error = await #expect(throws: SettingsSyncError.self) { try await admin.install() }
        #expect(error.map { String(describing: $0) } == "settings-sync-admin: install: cannot connect to 127.0.0.1:1 as postgres, database settings: connection refused 127.0.0.1:1")
    }

    // MARK: Helpers

    /// What the devices of a test did, and when they stop.
    final class Devices: Sendable {
        let stop = Atomic<Bool>(false)
        let pushes = Atomic<Int>(0)
        let errors = Mutex<[String]>([])
    }

    /// One device's statements, as the sync engine sends them, until `devices.stop`: a push, a
    /// check-in, a pull; `started` after the fifth round.
    func deviceLoop(_ conn: PostgresConnection, app: String, _ devices: Devices, started: () -> Void) async throws {
        let device = UUID()
        var n = 0
        while !devices.stop.load(ordering: .relaxed) {
            n += 1
            let hlc = Int64(Date().timeIntervalSince1970 * 1000) << 16
            let keys = ["k\(n % 20)"], values = [ByteBuffer(bytes: try PlistValue.string("v\(n)").encodedBytes(as: .binary))]
            let seq = try await conn.query(
                "SELECT change_seq FROM settings_sync.settings_sync_push(\(app), \(device), \(keys), \(values), \([hlc]), \([false]))", logger: logger
            ).decode(Int64.self).reduce(into: Int64(0)) { $0 = $1 }
            try await conn.query("SELECT settings_sync.settings_sync_check_in(\(app), \(device), \(seq))", logger: logger)
            for try await _ in try await conn.query("SELECT key, value FROM settings_sync.settings_sync_entries WHERE app = \(app) AND seq > \(seq - 5)", logger: logger) {}
            devices.pushes.add(1, ordering: .relaxed)
            if n == 5 { started() }
        }
    }

    /// The ``SettingsSyncError`` that `body` throws while another session holds `lock` (a `LOCK
    /// TABLE` statement) in `database`, as the admin tool prints it ("" and an issue when none).
    func whileLocked(_ database: String, _ lock: String, _ body: () async throws -> Void) async throws -> String {
        try await withTestConnection(superuser: true, database: database) { holder in
            try await holder.query("BEGIN", logger: logger)
            try await holder.query(PostgresQuery(unsafeSQL: lock), logger: logger)
            let error = await #expect(throws: SettingsSyncError.self) { try await body() }
            try await holder.query("ROLLBACK", logger: logger)
            return error.map { String(describing: $0) } ?? ""
        }
    }
}
