import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization
import Testing
@testable import SettingsPostgres

@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(1)))
struct ConvergenceTests {
    @Test func twoStoresConvergeBothWays() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app), b = try TestDevice(app: app)
        a.store["theme"] = "dark"
        a.store["Network/timeout"] = 30
        b.store["volume"] = 0.5
        try await a.synchronize()
        try await b.synchronize()
        try await a.synchronize()
        #expect(b.store.value(for: "theme", in: .user) == "dark")
        #expect(b.store.value(for: "Network/timeout", in: .user) == 30)
        #expect(a.store.value(for: "volume", in: .user) == 0.5)
        #expect(a.store.contents(of: .user).sortedByKey() == b.store.contents(of: .user).sortedByKey())
        await a.stop()
        await b.stop()
    }

    @Test func deletePropagatesAsTombstone() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app), b = try TestDevice(app: app)
        a.store["Network/proxy"] = "socks"
        a.store["keep"] = true
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "Network/proxy", in: .user) == "socks")
        a.store.removeValue(for: "Network/proxy")
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "Network/proxy", in: .user) == nil)
        #expect(b.store.value(for: "keep", in: .user) == true)
        // A device that joins later never sees the deleted key.
        let c = try TestDevice(app: app)
        try await c.synchronize()
        #expect(c.store.value(for: "Network/proxy", in: .user) == nil)
        #expect(c.store.value(for: "keep", in: .user) == true)
        await a.stop(); await b.stop(); await c.stop()
    }

    @Test func concurrentWritesKeepTheGreaterClockAndReportAConflict() async throws {
        let app = uniqueApp()
        let dirB = try TemporaryDirectory()
        let a = try TestDevice(app: app)
        // B edits while its sync is not running, so its edit is still unsent when A's arrives.
        let offlineB = try TestDevice(app: app, dir: dirB, start: false)
        offlineB.store["shared"] = "from B"
        try await offlineB.store.flush()
        a.store["shared"] = "from A"
        try await a.synchronize()
        let b = try TestDevice(app: app, dir: dirB)
        var bConflicts = b.sync.conflicts.makeAsyncIterator()
        try await b.synchronize()   // B pulls A's write against its own unsent one: one loses
        try await a.synchronize()
        let final = a.store.value(for: "shared", in: .user)
        #expect(final == b.store.value(for: "shared", in: .user))
        let conflict = try #require(await bConflicts.next())
        #expect(conflict.key == "shared")
        #expect(conflict.keptValue == final)
        #expect(Set([conflict.keptValue, conflict.lostValue]) == Set<PlistValue?>(["from A", "from B"]))
        #expect(LeafRegister.newer((conflict.keptClock, conflict.keptDevice), than: (conflict.lostClock, conflict.lostDevice)))
        let winner = conflict.keptDevice == a.sync.device ? "from A" : "from B"
        #expect(final == .string(winner))
        await a.stop(); await b.stop()
    }

    @Test func concurrentWritesOfTheSameValueAreNoConflict() async throws {
        let app = uniqueApp()
        let dirB = try TemporaryDirectory()
        let a = try TestDevice(app: app)
        let offlineB = try TestDevice(app: app, dir: dirB, start: false)
        offlineB.store["same"] = "agreed"
        try await offlineB.store.flush()
        a.store["same"] = "agreed"
        try await a.synchronize()
        let b = try TestDevice(app: app, dir: dirB)
        try await b.synchronize()
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "same", in: .user) == "agreed")
        #expect(a.sync.reportedCounts.conflicts == 0)
        #expect(b.sync.reportedCounts.conflicts == 0)
        await a.stop(); await b.stop()
    }

    @Test func defaultsDoNotSync() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app), b = try TestDevice(app: app)
        a.store.register(defaults: ["fontSize": 12, "Colors": ["accent": "blue"]])
        a.store["fontSize"] = 14
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "fontSize", in: .user) == 14)
        #expect(b.store.value(for: "Colors/accent") == nil)
        await a.stop(); await b.stop()
    }

    @Test func excludedKeysDoNotSyncEitherWay() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app, scope: .excluding(["Window"]))
        let b = try TestDevice(app: app, scope: .excluding(["Window"]))
        let c = try TestDevice(app: app)   // syncs everything
        a.store["Window/frame"] = "0 0 800 600"
        a.store["Windows"] = "not excluded: another key"
        c.store["Window/frame"] = "10 10 100 100"
        try await a.synchronize()
        try await c.synchronize()
        try await b.synchronize()
        try await a.synchronize()
        #expect(b.store.value(for: "Window/frame", in: .user) == nil)
        #expect(b.store.value(for: "Windows", in: .user) == "not excluded: another key")
        #expect(a.store.value(for: "Window/frame", in: .user) == "0 0 800 600")
        #expect(c.store.value(for: "Window/frame", in: .user) == "10 10 100 100")
        await a.stop(); await b.stop(); await c.stop()
    }

    @Test func remoteChangesReachStoreChangesWithSyncOrigin() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app), b = try TestDevice(app: app)
        _ = b.store.value(for: "x")  // loaded: the stream starts after the file is read
        var changes = b.store.changes.makeAsyncIterator()
        a.store["Editor/tabWidth"] = 4
        try await a.synchronize()
        try await b.synchronize()
        let change = try #require(await changes.next())
        #expect(change.origin == .sync)
        #expect(change.affects("Editor/tabWidth"))
        #expect(b.store["Editor/tabWidth"] == 4)
        await a.stop(); await b.stop()
    }

    @Test func valueTooLargeIsReportedAndOthersStillSync() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app), b = try TestDevice(app: app)
        var problems = a.sync.problems.makeAsyncIterator()
        a.store["big"] = .data(Data(repeating: 7, count: 300 * 1024))
        a.store["small"] = "fine"
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "small", in: .user) == "fine")
        #expect(b.store.value(for: "big", in: .user) == nil)
        #expect(a.store.value(for: "big", in: .user) != nil)  // kept local
        let problem = try #require(await problems.next())
        guard case let .valueTooLarge(key, bytes, limit) = problem else {
            Issue.record("expected valueTooLarge, got \(problem)")
            return
        }
        #expect(key == "big")
        #expect(bytes > 300 * 1024)
        #expect(limit == 256 * 1024)
        // Not retried (nor re-reported) until it changes.
        a.store["small"] = "still fine"
        try await a.synchronize()
        #expect(a.sync.reportedCounts.problems == 1)
        await a.stop(); await b.stop()
    }

    @Test func plantedBadRowsAreReportedOnceAndSkipped() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app)
        a.store["seed"] = 1
        try await a.synchronize()   // schema and space exist now
        let logger = Logger(label: "tests")
        let future = (Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000) << 16
        let now = Int64(Date().timeIntervalSince1970 * 1000) << 16
        let good = ByteBuffer(bytes: try PlistValue.string("yes").encodedBytes(as: .binary))
        let dict = ByteBuffer(bytes: try PlistValue.dictionary(["a": 1]).encodedBytes(as: .binary))
        let garbage = ByteBuffer(bytes: Array("bplist00 not really".utf8))
        let deep = String(repeating: "x/", count: 40) + "x"
        let rows: [(String, ByteBuffer, Int64)] = [
            ("bad//key", good, now), (deep, good, now), ("garbage", garbage, now),
            ("future", good, future), ("dict", dict, now), ("good", good, now),
        ]
        try await withTestConnection(superuser: true) { conn in   // devices cannot write rows directly
            var seq: Int64 = 0
            for try await s in try await conn.query(
                "UPDATE settings_sync.settings_sync_spaces SET seq = seq + 1 WHERE owner = 'settings' AND app = \(app) RETURNING seq", logger: logger
            ).decode(Int64.self) { seq = s }
            for (key, value, hlc) in rows {
                try await conn.query("""
                    INSERT INTO settings_sync.settings_sync_entries (owner, app, key, value, hlc, device, seq)
                    VALUES ('settings', \(app), \(key), \(value), \(hlc), \(UUID()), \(seq))
                    """, logger: logger)
            }
        }
        let b = try TestDevice(app: app)
        var problems = b.sync.problems.makeAsyncIterator()
        try await b.synchronize()
        #expect(b.store.value(for: "good", in: .user) == "yes")
        #expect(b.store.value(for: "seed", in: .user) == 1)
        var keys: [String] = []
        for _ in 0..<5 {
            guard case let .badRow(key, _, _) = try #require(await problems.next()) else { continue }
            keys.append(key)
        }
        #expect(Set(keys) == ["bad//key", deep, "garbage", "future", "dict"])
        try await b.synchronize()
        try await a.synchronize()
        #expect(b.sync.reportedCounts.problems == 5)
        #expect(a.sync.reportedCounts.problems == 5)
        #expect(a.store.value(for: "good", in: .user) == "yes")
        await a.stop(); await b.stop()
    }

    @Test func standbyTakesOverAfterTheSyncingOneStops() async throws {
        let app = uniqueApp()
        let dir = try TemporaryDirectory()
        let first = try TestDevice(app: app, dir: dir)
        try await first.synchronize()
        let second = try TestDevice(app: app, dir: dir)  // same settings file, another store
        var statuses = second.sync.statusUpdates.makeAsyncIterator()
        while let s = await statuses.next(), s != .standby {}
        await expectThrows(.standby) { try await second.sync.synchronize() }
        let stopped = ContinuousClock.now
        await first.stop()
        while let s = await statuses.next() {
            if case .upToDate = s { break }
        }
        let takeover = ContinuousClock.now - stopped
        #expect(takeover < .seconds(2), "took over after \(takeover)")
        first.store["after"] = "takeover"   // the first store is still open; the second syncs the file
        try await first.store.flush()
        let other = try TestDevice(app: app)
        try await second.synchronize()
        await second.stop()
        try await other.synchronize()
        _ = other
        await other.stop()
    }

    /// Regression: values were pushed (and recorded as synced) before the settings file had them,
    /// so a restart in between took them for deletions and pushed removals to every device.
    @Test func pushedValuesAreDurableInTheSettingsFileFirst() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app, autosave: nil)   // saves only on flush
        a.store["durable"] = "yes"
        try await a.synchronize()
        let onDisk = try PlistValue(contentsOf: a.dir.appending(path: "settings.plist"))
        #expect(onDisk["durable"] == "yes")
        await a.stop()
    }

    /// Issue 30, item 12: a pull's cursor is saved later than its apply (with the next state
    /// save), but never before the settings file holds what it passed: a store that saves only
    /// when flushed has the pulled value on disk by the time the state file's cursor passes it.
    @Test func theSavedCursorNeverPassesValuesTheSettingsFileDoesNotHold() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app)
        let b = try TestDevice(app: app, autosave: nil)   // saves only on flush
        try await b.synchronize()
        a.store["pulled"] = "durable first"
        try await a.synchronize()
        let seq = try await serverSeq(app)
        let storage = SyncStateStorage(url: b.sync.stateFileURL)
        while (try storage.load()?.cursorSeq ?? 0) < seq {
            try await Task.sleep(for: .milliseconds(20))   // polling pace; the suite's time limit bounds it
        }
        let onDisk = try PlistValue(contentsOf: b.dir.appending(path: "settings.plist"))
        #expect(onDisk["pulled"] == "durable first")
        await a.stop(); await b.stop()
    }

    /// Regression: edits made while offline were stamped when the connection came back, so an
    /// older offline edit beat a newer one made meanwhile on another device. It ends every
    /// device session of its database, so it runs in a database of its own: in the shared one it
    /// ended the other suites' sessions too.
    @Test func anOfflineEditKeepsItsPlaceInTime() async throws {
        try await withPrivateDatabase { _, database in try await offlineEditKeepsItsPlace(database) }
    }

    func offlineEditKeepsItsPlace(_ database: String) async throws {
        let app = uniqueApp()
        let logger = Logger(label: "tests")
        let user = try await TestServer.makeUser("oe")
        let url = "postgres://\(user.name):\(user.password)@127.0.0.1:\(TestServer.port)/\(database)"
        let a = try TestDevice(app: app, url: url)
        let b = try TestDevice(app: app, url: url)
        a.store["k"] = "first"
        try await a.synchronize()
        try await b.synchronize()
        var statuses = a.sync.statusUpdates.makeAsyncIterator()
        let good = a.sync.server
        a.sync.serverURL.withLock { $0.port = 1 }   // A goes offline (connection refused) and stays so
        try await withTestConnection(superuser: true, database: database) { conn in
            // The devices' sessions in this test's own database only.
            try await conn.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'settings-sync' AND datname = current_database()", logger: logger)
        }
        while let s = await statuses.next() {
            if case .offline = s { break }
        }
        a.store["k"] = "older, offline"
        // Not synchronisation: B's edit must be later in real time by more than the error of the
        // devices' clock offsets (half a round trip of a loaded connection).
        try await Task.sleep(for: .milliseconds(250))
        b.store["k"] = "newer, online"
        try await b.synchronize()
        a.sync.serverURL.withLock { $0 = good }
        try await a.synchronize()
        try await b.synchronize()
        #expect(a.store.value(for: "k", in: .user) == "newer, online")
        #expect(b.store.value(for: "k", in: .user) == "newer, online")
        await a.stop(); await b.stop()
    }

    /// Regression: a settings file that cannot be read looks empty, and its synced leaves were
    /// taken for deletions and removed on every device.
    @Test func anUnreadableSettingsFileDeletesNothingElsewhere() async throws {
        let app = uniqueApp()
        let dirA = try TemporaryDirectory()
        var a = try TestDevice(app: app, dir: dirA)
        let b = try TestDevice(app: app)
        a.store["precious"] = "keep me"
        try await a.synchronize()
        try await b.synchronize()
        await a.stop()
        try Data("<plist><dict><key>broken".utf8).write(to: dirA.appending(path: "settings.plist"))
        a = try TestDevice(app: app, dir: dirA)
        try await a.synchronize()
        #expect(a.store.loadError != nil)
        try await b.synchronize()
        #expect(b.store.value(for: "precious", in: .user) == "keep me")
        await a.stop(); await b.stop()
    }

    /// Regression: an operation on a connection that closed waited for its deadline (postgres-nio
    /// can leave a query written to a closing channel unanswered).
    @Test func anOperationFailsAsSoonAsItsConnectionCloses() async throws {
        let env = ProcessInfo.processInfo.environment
        let config = PostgresConnection.Configuration(
            host: "127.0.0.1", port: Int(env["SETTINGS_PG_PORT"] ?? "") ?? 5432, username: env["SETTINGS_PG_USER"] ?? "settings",
            password: env["SETTINGS_PG_PASSWORD"], database: env["SETTINGS_PG_DATABASE"], tls: .disable)
        let conn = try await PostgresConnection.connect(configuration: config, id: 7, logger: Logger(label: "tests"))
        let (started, signal) = AsyncStream<Void>.makeStream()
        let start = ContinuousClock.now
        let operation = Task {
            try await SyncEngine.timed(conn, .seconds(60), "a stuck query") {
                signal.yield()
                try? await Task.sleep(for: .seconds(60))   // stands for a query that is never answered
            }
        }
        for await _ in started { break }
        SyncEngine.closeNow(conn)
        let result = await operation.result
        #expect(throws: SyncConnectionError.self) { try result.get() }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func restartFromDurableStateDoesNotPushAgain() async throws {
        let app = uniqueApp()
        let dirA = try TemporaryDirectory(), dirB = try TemporaryDirectory()
        var a = try TestDevice(app: app, dir: dirA)
        var b = try TestDevice(app: app, dir: dirB)
        a.store["k1"] = "v1"
        a.store["Nested/k2"] = 2
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "Nested/k2", in: .user) == 2)
        await a.stop(); await b.stop()
        let seq = try await serverSeq(app)
        a = try TestDevice(app: app, dir: dirA)
        b = try TestDevice(app: app, dir: dirB)
        try await a.synchronize()
        try await b.synchronize()
        #expect(try await serverSeq(app) == seq)   // nothing pushed again
        #expect(b.store.value(for: "k1", in: .user) == "v1")
        // An edit made while no sync ran is pushed at the next start.
        await b.stop()
        b.store["k1"] = "edited offline"
        try await b.store.flush()
        b = try TestDevice(app: app, dir: dirB)
        try await b.synchronize()
        try await a.synchronize()
        #expect(a.store.value(for: "k1", in: .user) == "edited offline")
        #expect(try await serverSeq(app) == seq + 1)
        await a.stop(); await b.stop()
    }
}

func expectThrows(_ expected: SettingsSyncError, _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        try await body()
        Issue.record("expected \(expected) to be thrown", sourceLocation: sourceLocation)
    } catch {
        #expect(error as? SettingsSyncError == expected, sourceLocation: sourceLocation)
    }
}
