import Foundation
import Settings
import SettingsTestSupport
import Testing

/// Docs/Persistence.md's samples, run as written (those that cannot run in a test process are
/// compiled only: Tools/extract-doc-blocks.py says which and why).
extension GuideSuites {
@Suite("Guide: Persistence")
struct PersistenceGuideTests {
    @Test func samplesRunAsWritten() async throws {
        let run = try await GuideRun.run {
            for sample in samplesOfPersistence { try await sample() }
        }
        // The quick example: 0.8 "durable" in settings.plist when flush() returns.
        #expect(try run.file("settings.plist")["volume"] == 0.8)
        // Nothing locked the file and nothing failed to load: neither prints.
        #expect(sharedStoreOfPersistence.loadError == nil)
        #expect(!run.printed.contains("fileLocked") && !run.printed.contains("settings.plist:"), "\(run.printed)")
    }
}
}
