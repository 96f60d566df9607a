import Foundation
import Settings
import SettingsPlist
import Testing
@testable import SettingsPostgres

/// Tests that need no server.
struct OfflineTests {
    let directory: TemporaryDirectory
    let store: SettingsStore

    init() throws {
        directory = try TemporaryDirectory()
        store = SettingsStore.file(directory.appending(path: "settings.plist"))
    }

    @Test func tlsIsRequiredForNonLoopbackHosts() throws {
        #expect(throws: SettingsSyncError.tlsRequired(host: "db.example.com")) {
            try SettingsSync.postgres(url: "postgres://ada:pw@db.example.com/settings", store: store, app: "a")
        }
        #expect(throws: SettingsSyncError.tlsRequired(host: "10.0.0.5")) {
            try SettingsSync.postgres(url: "postgres://ada@10.0.0.5:5433/settings?sslmode=disable", store: store, app: "a")
        }
        let tls = try PostgresURL("postgres://ada:p%40ss@db.example.com:6543/notes?sslmode=require", password: nil)
        #expect(tls.tls == .require)
        #expect(tls.password == "p@ss")
        #expect(tls.port == 6543)
        #expect(tls.database == "notes")
        let local = try PostgresURL("postgres://settings@127.0.0.1:55432/settings", password: "override")
        #expect(local.tls == .disable)
        #expect(local.password == "override")
        #expect(try PostgresURL("postgresql://u@[::1]/d", password: nil).tls == .disable)
        #expect(try PostgresURL("postgres://u@localhost/d?sslmode=require", password: nil).tls == .require)
    }

    @Test func badURLsAndAppIdsAreRefused() {
        #expect(throws: SettingsSyncError.self) { try SettingsSync.postgres(url: "http://x/y", store: store, app: "a") }
        #expect(throws: SettingsSyncError.self) { try SettingsSync.postgres(url: "postgres://127.0.0.1/y", store: store, app: "a") }
        #expect(throws: SettingsSyncError.invalidApp("")) {
            try SettingsSync.postgres(url: "postgres://u@127.0.0.1/d", store: store, app: "")
        }
        let long = String(repeating: "a", count: 201)
        #expect(throws: SettingsSyncError.invalidApp(long)) {
            try SettingsSync.postgres(url: "postgres://u@127.0.0.1/d", store: store, app: long)
        }
    }

    @Test func urlErrorsNeverShowThePasswordAndBadEncodingIsRefused() {
        for url in ["postgres://ada:hunter2 x@[bad/settings", "postgres://ada:hunter2%zz@127.0.0.1/settings"] {
            do {
                _ = try SettingsSync.postgres(url: url, store: store, app: "a")
                Issue.record("\(url) was accepted")
            } catch {
                #expect(!error.description.contains("hunter2"))
                guard case .invalidURL = error else { Issue.record("\(error)"); continue }
            }
        }
    }

    @Test func appIdsWithControlCharactersAreRefused() {
        for app in ["a\u{0}b", "line\nbreak", "\u{7f}"] {
            #expect(throws: SettingsSyncError.invalidApp(app)) {
                try SettingsSync.postgres(url: "postgres://u@127.0.0.1/d", store: store, app: app)
            }
        }
    }

    @Test func scopeExcludesPrefixesByComponent() {
        let scope = SettingsSyncScope.excluding(["Window", "A/b"])
        #expect(!scope.includes("Window"))
        #expect(!scope.includes("Window/frame"))
        #expect(scope.includes("Windows"))
        #expect(!scope.includes("A/b/c"))
        #expect(scope.includes("A/bc"))
        #expect(SettingsSyncScope.all.includes("Window"))
    }

    @Test func registersOrderByClockThenDevice() throws {
        let low = try #require(UUID(uuidString: "00000000-0000-0000-0000-000000000001"))
        let high = try #require(UUID(uuidString: "F0000000-0000-0000-0000-000000000000"))
        #expect(LeafRegister.newer((2, low), than: (1, high)))
        #expect(LeafRegister.newer((1, high), than: (1, low)))
        #expect(!LeafRegister.newer((1, low), than: (1, low)))
    }

    @Test func statusDescriptionsAreOneLine() {
        #expect(SettingsSyncStatus.upToDate(seq: 7).description == "uptodate 7")
        #expect(SettingsSyncStatus.offline(reason: "a\nb").description == "offline a b")
        #expect(SettingsSyncStatus.standby.description == "standby")
    }

    @Test func stateFileRoundTripsThroughItsPlist() throws {
        let me = UUID(), other = UUID()
        var state = SyncStateFile(app: "com.example", device: me)
        state.cursorSeq = 42
        state.cursorKey = "a/b"
        state.lastHLC = 123 << 16
        state.clockOffsetMs = -7
        state.leaves["synced"] = LeafRegister(hlc: 5, device: other, digest: 99, state: .synced)
        state.leaves["gone"] = LeafRegister(hlc: 6, device: me, digest: nil, state: .pending)
        var applying = LeafRegister(hlc: 8, device: other, digest: -3, state: .applying)
        applying.prevHLC = 7
        applying.prevDevice = me
        applying.prevDigest = nil
        applying.prevState = .pending
        applying.prevExists = true
        state.leaves["Paths/a\\/b"] = applying
        let bytes = try state.plist.encoded(as: .binary)
        let back = try #require(SyncStateFile(plist: try PlistValue(decoding: bytes)))
        #expect(back == state)
        #expect(SyncStateFile(plist: ["format": 2]) == nil)
    }

    @Test func synchronizeBeforeRunThrowsNotRunning() async throws {
        let sync = try SettingsSync.postgres(url: "postgres://u@127.0.0.1:1/d", store: store, app: "a")
        await expectThrows(.notRunning) { try await sync.synchronize() }
    }
}
