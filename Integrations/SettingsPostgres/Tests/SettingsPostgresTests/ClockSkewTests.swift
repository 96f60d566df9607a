import Foundation
import Settings
import SettingsPlist
import Synchronization
import Testing
@testable import SettingsPostgres

/// A device whose clock is an hour ahead still orders its writes by real time: its clock is
/// corrected by the server's at every connect.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(3)))
struct ClockSkewTests {
    @Test func aClockAnHourAheadDoesNotWinOverLaterWrites() async throws {
        let app = uniqueApp()
        let ahead = try TestDevice(app: app, start: false)
        ahead.sync.clockSkewMs.withLock { $0 = 3_600_000 }
        let aheadTask = Task { await ahead.sync.run() }
        let normal = try TestDevice(app: app)
        var inOrder = 0
        for i in 0..<100 {
            let (writer, reader) = i % 2 == 0 ? (ahead, normal) : (normal, ahead)
            writer.store["turn"] = PlistValue(i)
            try await writer.synchronize()
            try await reader.synchronize()
            if reader.store.value(for: "turn", in: .user) == PlistValue(i) { inOrder += 1 }
        }
        #expect(inOrder == 100)
        #expect(ahead.sync.reportedCounts.conflicts == 0)
        ahead.sync.stop()
        await aheadTask.value
        await normal.stop()
    }
}
