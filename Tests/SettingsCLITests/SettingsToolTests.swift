import Foundation
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tool as a whole: usage errors exit 2, every command has help.
struct SettingsToolTests {
    @Test(arguments: [["print"], ["convert", "xml9", "x"], ["frobnicate"], ["print", "--bogus", "x"], []])
    func usageErrorsExitTwo(arguments: [String]) throws {
        #expect(try CLI.run(arguments, environment: [:]).status == 2)
    }

    @Test(arguments: ["read", "read-type", "write", "delete", "rename", "keys", "domains", "find", "import", "export",
                      "print", "convert", "lint", "extract", "type", "insert", "replace", "remove", "create", "diff"])
    func everyCommandHasHelp(command: String) throws {
        let out = try CLI.run(command, "--help")
        #expect(out.status == 0)
        #expect(out.stdout.hasPrefix("usage: settings \(command)"))
    }

    /// `settings --version` prints the version CHANGELOG.md names (issue 31, item 7).
    @Test func versionIsTheChangelogs() throws {
        let out = try CLI.run("--version")
        #expect(out.status == 0)
        let changelog = try String(contentsOf: URL(filePath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appending(path: "CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }.map { String($0.dropFirst(3).prefix { $0 != " " }) }
        #expect(out.stdout == "settings \(newest ?? "?")\n")
    }
}
