import Foundation
import SettingsTestSupport
import Testing

/// The manual page (issue 31, item 7): `settings help --man` makes it from the help texts the
/// tool prints, and Docs/settings.1 is its output, so the page and the help cannot drift apart.
struct ManPageCLITests {
    static let checkedIn = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Docs/settings.1")

    @Test func checkedInPageIsTheToolsOutput() throws {
        let out = try CLI.run("help", "--man")
        #expect(out.status == 0)
        let file = try String(contentsOf: Self.checkedIn, encoding: .utf8)
        #expect(out.stdout == file, "Docs/settings.1 is out of date: run 'swift run settings help --man > Docs/settings.1'")
    }

    /// Every command's `--help`, line by line, is in the page (as roff writes `-` and `\`).
    @Test func pageHoldsEveryCommandsHelp() throws {
        let page = try CLI.run("help", "--man").stdout
        let help = try CLI.run("--help").stdout
        let commands = help.split(separator: "\n").filter { $0.hasPrefix("  ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(commands.count >= 26)
        for command in commands {
            #expect(page.contains("\n.SS \(command.replacing("-", with: "\\-"))\n"))
            let usage = try CLI.run(command, "--help").stdout
            for line in usage.split(separator: "\n") {
                let roff = line.replacing("\\", with: "\\e").replacing("-", with: "\\-")
                #expect(page.contains(roff), "\(command): \(line)")
            }
        }
    }

    /// groff reads the page without a warning, where groff is installed.
    @Test func groffReadsThePage() throws {
        let groff = URL(filePath: "/usr/bin/groff")
        guard FileManager.default.isExecutableFile(atPath: groff.path) else { return }
        let out = try CLI.launch(groff, ["-man", "-Tutf8", "-ww", "-z", Self.checkedIn.path], environment: [:])
        #expect(out.status == 0)
        #expect(out.stderr == "")
    }
}
