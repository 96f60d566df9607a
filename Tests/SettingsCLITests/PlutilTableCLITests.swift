import Foundation
import SettingsTestSupport
import Testing

/// Docs/Tool.md's table of differences from the toolchain's `plutil` stays true (issue 31, item
/// 7): Tools/compare-plutil.py runs each row as fixed cases with both tools, fails when a row
/// no longer differs as it says, when a row has no case or a case no row, and when a difference
/// the tool removed (`-p` of reals) comes back. Runs where the toolchain's `plutil` and python3
/// are installed (the toolchain ships `plutil` beside `swift`).
struct PlutilTableCLITests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The first executable called `name` on `PATH`.
    static func onPath(_ name: String) -> URL? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .map { URL(filePath: String($0)).appending(path: name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    @Test func theTableOfDifferencesIsWhatBothToolsDo() throws {
        guard let python = Self.onPath("python3"), let swift = Self.onPath("swift") else { return }
        let plutil = swift.resolvingSymlinksInPath().deletingLastPathComponent().appending(path: "plutil")
        guard FileManager.default.isExecutableFile(atPath: plutil.path) else { return }
        let out = try CLI.launch(python, [Self.root.appending(path: "Tools/compare-plutil.py").path, "--table-only",
                                          "--settings", CLI.executable.path, "--plutil", plutil.path], environment: [:])
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        #expect(out.stdout.hasPrefix("table: 12 rows"), "\(out.stdout)")
    }
}
