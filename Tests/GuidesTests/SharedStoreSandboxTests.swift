import Foundation
import Settings
import Testing

/// `SettingsStore.shared` in a directory of the test process's own, never in the user's home: the
/// argument below is evaluated when Swift Testing plans the run, before any test names the store
/// (``GuideRun/sharedConfigHome`` sets `XDG_CONFIG_HOME` then).
struct SharedStoreSandboxTests {
    @Test(arguments: [GuideRun.sharedConfigHome])
    func sharedStoreIsInTheSandbox(_ home: String) throws {
        let url = try #require(SettingsStore.shared.url)
        #expect(url.path.hasPrefix(home + "/"), "\(url.path)")
    }
}
