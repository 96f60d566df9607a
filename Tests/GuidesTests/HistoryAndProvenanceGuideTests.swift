import Foundation
import Settings
import SettingsTestSupport
import Testing

/// Docs/HistoryAndProvenance.md's samples, run as written. Its other blocks are functions, compiled
/// only; what they read is tested in Tests/SettingsTests.
extension GuideSuites {
@Suite("Guide: History and provenance")
struct HistoryAndProvenanceGuideTests {
    @Test func samplesRunAsWritten() async throws {
        let run = try await GuideRun.run {
            for sample in samplesOfHistoryAndProvenance { try await sample() }
        }
        // The limits take effect at the store's first save: making the store writes nothing yet.
        #expect(!FileManager.default.fileExists(atPath: run.directory.path("audited")))
    }
}
}
