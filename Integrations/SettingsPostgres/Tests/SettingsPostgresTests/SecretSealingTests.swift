import Crypto
import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Testing
@testable import SettingsPostgres

/// Secrets against a device started without its key, a DBA and a device with the wrong key
/// (issue 30, items 2 and 4): a secret never leaves a device unsealed, and what the server does to
/// a sealed value (put an older one back, null or delete the row) changes nothing on the devices.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(3)))
struct SecretSealingTests {
    let logger = Logger(label: "tests")
    static let marked = [SettingsKey.secret("Session")]

    /// Issue 30, item 2: a secret edited on a device that has the key, left pending, then pushed
    /// by a run started without the key (and without `marking`): before, 2 rows in clear and its
    /// hex in the server log's bind parameters. Now it waits, reported, and the run with the key
    /// pushes it sealed.
    @Test func item2_aPendingSecretWaitsForARunWithTheKey() async throws {
        let user = try await TestServer.makeUser("k")
        try await logEveryStatement(of: user.name)
        let key = SymmetricKey(size: .bits256)
        let app = uniqueApp()
        let dir = try TemporaryDirectory()
        let cookie = "cookie-\(UUID().uuidString)", license = "lic-\(UUID().uuidString)", plain = "plain-\(UUID().uuidString)"

        // Edited while the server cannot be reached, on a device that has the key: pending.
        let offline = try TestDevice(app: app, dir: dir, url: "postgres://\(user.name):x@127.0.0.1:1/settings",
                                     secrets: .encrypted(with: key).marking(Self.marked), start: false)
        offline.store["Session/id"] = PlistValue(cookie)
        offline.store["Account/licenseKey"] = PlistValue(license)
        try await offline.store.flush()
        let run = try await runUntilOffline(offline.sync)
        offline.sync.stop()
        await run.value

        // The app starts without the key and without marking anything, online.
        let keyless = try TestDevice(app: app, dir: dir, url: user.url)
        var problems = keyless.sync.problems.makeAsyncIterator()
        keyless.store["plain"] = PlistValue(plain)
        try await keyless.synchronize()
        var heldBack: Set<String> = []
        while heldBack.count < 2, let problem = await problems.next() {
            if case .secretHeldBack(let k, _) = problem { heldBack.insert(k) }
        }
        #expect(heldBack == ["Session/id", "Account/licenseKey"])
        try await keyless.synchronize()
        await keyless.stop()
        var rows = try await entries(user.name, app)
        #expect(Set(rows.keys) == ["plain"])

        // The server log holds the bind parameters of every statement of this user (the plain
        // value's hex proves it), and none of the secrets.
        let log = try serverLogText()
        #expect(log.contains(hex(plain)), "the parameters were not logged: the log check proves nothing")
        #expect(!log.contains(hex(cookie)) && !log.contains(cookie))
        #expect(!log.contains(hex(license)) && !log.contains(license))

        // The run with the key pushes them, sealed.
        let withKey = try TestDevice(app: app, dir: dir, url: user.url, secrets: .encrypted(with: key).marking(Self.marked))
        try await withKey.synchronize()
        await withKey.stop()
        rows = try await entries(user.name, app)
        #expect(Set(rows.keys) == ["plain", "Session/id", "Account/licenseKey"])
        for path in ["Session/id", "Account/licenseKey"] {
            let bytes = try #require(rows[path] ?? nil)
            #expect(bytes.starts(with: Array("SSE2".utf8)))
        }
        let other = try TestDevice(app: app, url: user.url, secrets: .encrypted(with: key).marking(Self.marked))
        try await other.synchronize()
        #expect(other.store.value(for: "Session/id", in: .user) == PlistValue(cookie))
        #expect(other.store.value(for: "Account/licenseKey", in: .user) == PlistValue(license))
        await other.stop()
        try await stopLogging(of: user.name)
        #expect(try !serverLogText().contains(hex(cookie)))
    }

    /// Issue 30, item 2: a DBA fakes a reset (`seq = 0`, rows deleted); the device, restarted
    /// without its key, uploads its plain keys again and holds its secrets back.
    @Test func item2_aFakedResetNeverResendsSecretsInClear() async throws {
        let user = try await TestServer.makeUser("r")
        let key = SymmetricKey(size: .bits256)
        let app = uniqueApp()
        let dir = try TemporaryDirectory()
        let a = try TestDevice(app: app, dir: dir, url: user.url, secrets: .encrypted(with: key).marking(Self.marked))
        a.store["Session/cookie"] = "reset-cookie-SECRET"
        a.store["Account/apiToken"] = "reset-token-SECRET"
        a.store["plain"] = "visible"
        try await a.synchronize()
        await a.stop()
        try await asDBA { conn in
            try await conn.query("DELETE FROM settings_sync.settings_sync_entries WHERE owner = \(user.name) AND app = \(app)", logger: logger)
            try await conn.query("UPDATE settings_sync.settings_sync_spaces SET seq = 0 WHERE owner = \(user.name) AND app = \(app)", logger: logger)
        }
        let keyless = try TestDevice(app: app, dir: dir, url: user.url)
        try await keyless.synchronize()
        try await keyless.synchronize()
        await keyless.stop()
        let rows = try await entries(user.name, app)
        #expect(Set(rows.keys) == ["plain"])
        #expect(!rows.values.contains { String(decoding: $0 ?? [], as: UTF8.self).contains("SECRET") })
    }

    /// Issue 30, item 2: keys that sync in clear but look secret are reported once at start.
    @Test func item2_aKeyThatLooksSecretIsReportedAtStart() async throws {
        let device = try TestDevice(app: uniqueApp(), url: "postgres://u:x@127.0.0.1:1/settings", start: false)
        device.store["Deploy/signingSalt"] = "s"
        device.store["Keys/hotKey"] = "k"
        device.store["Sync/keyboard"] = "us"
        device.store["Account/pin"] = "1234"   // secret by name: never synced in clear, no warning
        var problems = device.sync.problems.makeAsyncIterator()
        let run = try await runUntilOffline(device.sync)   // it reports before it connects
        #expect(device.sync.reportedCounts.problems == 2)
        var reported: Set<String> = []
        while reported.count < 2, let problem = await problems.next() {
            if case .looksSecret(let k) = problem { reported.insert(k) }
        }
        #expect(reported == ["Deploy/signingSalt", "Keys/hotKey"])
        device.sync.stop()
        await run.value
    }

    /// Issue 30, item 4: a DBA puts back an older ciphertext, with its old clock (an older
    /// version) or with a new one (a replay at another version); both are refused and reported,
    /// and the device keeps the newer value. A sealed value copied into another user's space
    /// (same end-to-end key) is refused too.
    @Test func item4_anOlderCiphertextPutBackIsRefused() async throws {
        let user = try await TestServer.makeUser("v")
        let key = SymmetricKey(size: .bits256)
        let secrets = SettingsSyncSecrets.encrypted(with: key).marking(Self.marked)
        let app = uniqueApp()
        let a = try TestDevice(app: app, url: user.url, secrets: secrets)
        let b = try TestDevice(app: app, url: user.url, secrets: secrets)
        var problems = b.sync.problems.makeAsyncIterator()
        a.store["Session/cookie"] = "old-token"
        try await a.synchronize()
        try await b.synchronize()
        let old = try await row(user.name, app, "Session/cookie")
        a.store["Session/cookie"] = "new-token"
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "Session/cookie", in: .user) == "new-token")

        // The old ciphertext under a newer clock: it does not open at that version.
        try await putBack(user.name, app, "Session/cookie", value: old.value, hlc: old.hlc + 1, device: old.device)
        try await b.synchronize()
        let first = try #require(await problems.next())
        guard case .secretRefused("Session/cookie", _, let reason) = first else { Issue.record("\(first)"); return }
        #expect(reason.contains("not sealed for this user, app, key and version"), "\(reason)")
        #expect(b.store.value(for: "Session/cookie", in: .user) == "new-token")

        // The old row as it was: an older version than the one B has.
        try await putBack(user.name, app, "Session/cookie", value: old.value, hlc: old.hlc, device: old.device)
        try await b.synchronize()
        let second = try #require(await problems.next())
        guard case .secretRefused("Session/cookie", _, let reason2) = second else { Issue.record("\(second)"); return }
        #expect(reason2.contains("older version"), "\(reason2)")
        #expect(b.store.value(for: "Session/cookie", in: .user) == "new-token")

        // Copied into another user's space, who shares the end-to-end key.
        let other = try await TestServer.makeUser("w")
        let c = try TestDevice(app: app, url: other.url, secrets: secrets)
        c.store["plain"] = 1
        try await c.synchronize()
        var cProblems = c.sync.problems.makeAsyncIterator()
        try await asDBA { conn in
            try await conn.query("""
                WITH s AS (UPDATE settings_sync.settings_sync_spaces SET seq = seq + 1 WHERE owner = \(other.name) AND app = \(app) RETURNING seq)
                INSERT INTO settings_sync.settings_sync_entries (owner, app, key, value, hlc, device, seq)
                SELECT \(other.name), app, key, value, hlc, device, (SELECT seq FROM s) FROM settings_sync.settings_sync_entries
                 WHERE owner = \(user.name) AND app = \(app) AND key = 'Session/cookie'
                """, logger: logger)
        }
        try await c.synchronize()
        let moved = try #require(await cProblems.next())
        guard case .secretRefused("Session/cookie", _, _) = moved else { Issue.record("\(moved)"); return }
        #expect(c.store.value(for: "Session/cookie", in: .user) == nil)
        await a.stop(); await b.stop(); await c.stop()
    }

    /// Issue 30, item 4: a DBA nulls a secret's row, then deletes it and fakes a purge (a full
    /// download): the secret stays on the devices. A deletion made on a device is sealed, and
    /// deletes it everywhere.
    @Test func item4_aSecretIsDeletedOnlyByASealedDeletion() async throws {
        let user = try await TestServer.makeUser("d")
        let secrets = SettingsSyncSecrets.encrypted(with: SymmetricKey(size: .bits256)).marking(Self.marked)
        let app = uniqueApp()
        let a = try TestDevice(app: app, url: user.url, secrets: secrets)
        let b = try TestDevice(app: app, url: user.url, secrets: secrets)
        var problems = b.sync.problems.makeAsyncIterator()
        a.store["Session/cookie"] = "kept"
        a.store["plain"] = "p"
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "Session/cookie", in: .user) == "kept")

        let stamp = try await row(user.name, app, "Session/cookie")
        try await putBack(user.name, app, "Session/cookie", value: nil, hlc: stamp.hlc + (1 << 16), device: stamp.device)
        try await b.synchronize()
        let nulled = try #require(await problems.next())
        guard case .secretRefused("Session/cookie", _, let reason) = nulled else { Issue.record("\(nulled)"); return }
        #expect(reason.contains("deletion that is not sealed"), "\(reason)")
        #expect(b.store.value(for: "Session/cookie", in: .user) == "kept")

        try await asDBA { conn in
            try await conn.query("DELETE FROM settings_sync.settings_sync_entries WHERE owner = \(user.name) AND app = \(app) AND key = 'Session/cookie'", logger: logger)
            try await conn.query("UPDATE settings_sync.settings_sync_spaces SET seq = seq + 1, purged_seq = seq + 1 WHERE owner = \(user.name) AND app = \(app)", logger: logger)
        }
        b.sync.stop()
        await b.task.value
        let b2 = try TestDevice(app: app, dir: b.directory, url: user.url, secrets: secrets)
        try await b2.synchronize()
        #expect(b2.store.value(for: "Session/cookie", in: .user) == "kept")
        #expect(b2.store.value(for: "plain", in: .user) == "p")

        // A deletion on a device: a sealed row, applied by the others.
        a.store["Session/cookie"] = nil
        try await a.synchronize()
        let tombstone = try #require(try await entries(user.name, app)["Session/cookie"] ?? nil)
        #expect(tombstone.starts(with: Array("SSE2".utf8)))
        try await b2.synchronize()
        #expect(b2.store.value(for: "Session/cookie", in: .user) == nil)
        await a.stop(); await b2.stop()
    }

    /// Issue 30, item 4: a device with another end-to-end key does not push over a secret it
    /// cannot open (it would hide it from the devices with the right key); it reports it.
    @Test func item4_aDeviceWithTheWrongKeyDoesNotOverwriteTheSecret() async throws {
        let user = try await TestServer.makeUser("x")
        let right = SettingsSyncSecrets.encrypted(with: SymmetricKey(size: .bits256)).marking(Self.marked)
        let wrong = SettingsSyncSecrets.encrypted(with: SymmetricKey(size: .bits256)).marking(Self.marked)
        let app = uniqueApp()
        let a = try TestDevice(app: app, url: user.url, secrets: right)
        a.store["Session/cookie"] = "right"
        try await a.synchronize()
        let before = try await row(user.name, app, "Session/cookie")

        let w = try TestDevice(app: app, url: user.url, secrets: wrong)
        var problems = w.sync.problems.makeAsyncIterator()
        w.store["Session/cookie"] = "from-the-wrong-key"
        try await w.synchronize()
        var seen: [SettingsSyncError] = []
        while seen.count < 2, let p = await problems.next() { seen.append(p) }
        #expect(seen.contains { if case .secretRefused("Session/cookie", _, _) = $0 { true } else { false } }, "\(seen)")
        #expect(seen.contains { if case .secretHeldBack("Session/cookie", _) = $0 { true } else { false } }, "\(seen)")
        let after = try await row(user.name, app, "Session/cookie")
        #expect(after.value == before.value && after.hlc == before.hlc)

        let fresh = try TestDevice(app: app, url: user.url, secrets: right)
        try await fresh.synchronize()
        #expect(fresh.store.value(for: "Session/cookie", in: .user) == "right")
        await a.stop(); await w.stop(); await fresh.stop()
    }

    /// Issue 30, item 4: a 128-bit key was accepted and failed each push with "value too large
    /// to sync: … -1 bytes"; now it is refused up front, naming the key's size.
    @Test func item4_aKeyThatIsNot256BitsIsRefusedNamingItsSize() throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.appending(path: "settings.plist"))
        let error = #expect(throws: SettingsSyncError.self) {
            try SettingsSync.postgres(url: "postgres://u@127.0.0.1/s", store: store, app: "a",
                                      secrets: .encrypted(with: SymmetricKey(size: .bits128)))
        }
        #expect(error == .invalidSecretKey(bits: 128))
        #expect(error?.description == "the end-to-end key for secrets is 128 bits; it must be 256 bits (32 bytes)")
    }

    // MARK: Helpers

    /// Starts `sync` and returns its run once it reports itself offline (it has read and saved
    /// its state by then).
    func runUntilOffline(_ sync: SettingsSync) async throws -> Task<Void, Never> {
        let updates = sync.statusUpdates
        let run = Task { await sync.run() }
        for await status in updates { if case .offline = status { break } }
        return run
    }

    func asDBA(_ body: (PostgresConnection) async throws -> Void) async throws {
        try await withTestConnection(superuser: true) { conn in try await body(conn) }
    }

    /// The space's rows: key → value bytes (`nil`: a plain tombstone).
    func entries(_ owner: String, _ app: String) async throws -> [String: [UInt8]?] {
        try await withTestConnection(superuser: true) { conn in
            var out: [String: [UInt8]?] = [:]
            let rows = try await conn.query("SELECT key, value FROM settings_sync.settings_sync_entries WHERE owner = \(owner) AND app = \(app)", logger: logger)
            for try await (key, value) in rows.decode((String, ByteBuffer?).self) {
                out[key] = .some(value.map { Array($0.readableBytesView) })
            }
            return out
        }
    }

    func row(_ owner: String, _ app: String, _ key: String) async throws -> (value: [UInt8]?, hlc: Int64, device: UUID) {
        try await withTestConnection(superuser: true) { conn in
            let rows = try await conn.query("""
                SELECT value, hlc, device FROM settings_sync.settings_sync_entries WHERE owner = \(owner) AND app = \(app) AND key = \(key)
                """, logger: logger)
            for try await (value, hlc, device) in rows.decode((ByteBuffer?, Int64, UUID).self) {
                return (value.map { Array($0.readableBytesView) }, hlc, device)
            }
            throw SyncConnectionError(description: "no row \(key)")
        }
    }

    /// What a DBA does: writes the row and gives it a new change number, so devices pull it.
    func putBack(_ owner: String, _ app: String, _ key: String, value: [UInt8]?, hlc: Int64, device: UUID) async throws {
        let bytes = value.map { ByteBuffer(bytes: $0) }
        try await asDBA { conn in
            try await conn.query("""
                WITH s AS (UPDATE settings_sync.settings_sync_spaces SET seq = seq + 1 WHERE owner = \(owner) AND app = \(app) RETURNING seq)
                UPDATE settings_sync.settings_sync_entries SET value = \(bytes), hlc = \(hlc), device = \(device), seq = (SELECT seq FROM s)
                 WHERE owner = \(owner) AND app = \(app) AND key = \(key)
                """, logger: logger)
        }
    }

    func logEveryStatement(of role: String) async throws {
        try await asDBA { conn in try await conn.query(PostgresQuery(unsafeSQL: "ALTER ROLE \(role) SET log_statement = 'all'"), logger: logger) }
    }

    func stopLogging(of role: String) async throws {
        try await asDBA { conn in try await conn.query(PostgresQuery(unsafeSQL: "ALTER ROLE \(role) RESET log_statement"), logger: logger) }
    }

    func serverLogText() throws -> String {
        let url = try #require(AdminUsersTests.serverLog, "PGDATA_DIR is not set: run under Scripts/test-server.sh")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The hex of `text`'s UTF-8, as the log shows a bytea parameter holding it.
    func hex(_ text: String) -> String {
        text.utf8.map { String(format: "%02x", $0) }.joined()
    }
}
