import Foundation
import Settings
import SettingsPlist
import Testing
@testable import SettingsPostgres

/// `settings-sync-admin purge` drops tombstones; a device whose cursor is older downloads its
/// space again and deletes what was deleted meanwhile.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(1)))
struct TombstonePurgeTests {
    @Test func aDeviceBehindAPurgeResyncsFully() async throws {
        let app = uniqueApp()
        let dirB = try TemporaryDirectory()
        let a = try TestDevice(app: app)
        var b = try TestDevice(app: app, dir: dirB)
        a.store["gone"] = "soon"
        a.store["stays"] = 1
        try await a.synchronize()
        try await b.synchronize()
        #expect(b.store.value(for: "gone", in: .user) == "soon")
        await b.stop()
        a.store.removeValue(for: "gone")
        a.store["new"] = true
        try await a.synchronize()
        let admin = try SettingsSyncAdmin(url: TestServer.adminURL, password: TestServer.adminPassword)
        #expect(try await admin.purge(keepingDays: 0) >= 1)
        b = try TestDevice(app: app, dir: dirB)
        try await b.synchronize()
        #expect(b.store.value(for: "gone", in: .user) == nil)
        #expect(b.store.value(for: "new", in: .user) == true)
        #expect(b.store.value(for: "stays", in: .user) == 1)
        await a.stop(); await b.stop()
    }
}
