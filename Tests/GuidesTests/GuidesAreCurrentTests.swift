import Foundation
import SettingsTestSupport
import Testing

/// The guides' Swift samples are compiled from Generated/Generated*.swift, which
/// Tools/extract-doc-blocks.py writes from the Markdown. This fails when one is not what the
/// script makes of its guide now (a guide's Swift changed since, or the script): run the script.
/// The script is the one copy of how a guide becomes Swift; this only asks it.
struct GuidesAreCurrentTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "the check is the script's: it needs python3"))
    func everyGeneratedFileIsWhatItsGuideMakes() throws {
        let check = try runProgram(URL(filePath: "/usr/bin/python3"), [Self.root.appending(path: "Tools/extract-doc-blocks.py").path, "--check"])
        #expect(check.status == 0, "\(check.stderr)")
    }
}
