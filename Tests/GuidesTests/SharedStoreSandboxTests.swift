import Foundation
import Settings
import Testing

/// `SettingsStore.shared` in a directory of the test process's own, never in the user's home
/// (`Tests/SettingsTestSandbox` sets `XDG_CONFIG_HOME` when the test process starts), whichever
/// test names it first and whatever `--filter` selects.
struct SharedStoreSandboxTests {
    @Test func sharedStoreIsInTheSandbox() throws {
        let home = GuideRun.sharedConfigHome
        #expect(!home.isEmpty)
        let url = try #require(SettingsStore.shared.url)
        #expect(url.path.hasPrefix(home + "/"), "\(url.path)")
    }
}
