import Foundation
import Settings
import SettingsPlist
import Testing
@testable import SettingsPostgres

@Suite(TestServer.enabled, .serialized)
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
        #expect(a.store.contents(of: .user) .sortedByKey() == b.store.contents(of: .user).sortedByKey())
        await a.stop()
        await b.stop()
    }
}
