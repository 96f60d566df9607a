import Foundation
import Settings
import SettingsTestSupport
import Testing

/// Docs/PropertyLists.md's samples, run as written.
extension GuideSuites {
@Suite("Guide: Property lists")
struct PropertyListsGuideTests {
    @Test func samplesRunAsWritten() async throws {
        let value: PlistValue = ["volume": 0.8, "Network": ["timeout": 30]]
        let run = try await GuideRun.run(setUp: { dir in
            try value.write(to: dir.file("settings.plist"), format: .binary)
        }) {
            for sample in samplesOfPropertyLists { try await sample() }
        }
        // Read as binary ("detected"), written back as XML, the same value.
        #expect(try run.directory.bytes("settings.plist").starts(with: Array("<?xml".utf8)))
        #expect(try run.file("settings.plist") == value)
    }
}
}
