import Foundation
import Testing
import SettingsTestSupport

/// `read`, `print` and `diff` print secret-looking keys as `<redacted>` unless `--show-secrets`.
struct SecretsCLITests {
    static let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>host</key><string>example.com</string>
        <key>password</key><string>hunter2</string>
        <key>API</key><dict><key>token</key><string>tok-123</string></dict>
        </dict></plist>
        """

    func withFiles(_ body: (URL) throws -> Void) throws {
        let temporary = try TemporaryDirectory()
        let dir = temporary.url
        try Data(Self.plist.utf8).write(to: dir.appending(path: "a.plist"))
        try Data(Self.plist.replacing("tok-123", with: "tok-456").utf8).write(to: dir.appending(path: "b.plist"))
        try body(dir)
    }

    @Test func readRedactsUnlessAsked() throws {
        try withFiles { dir in
            let file = dir.appending(path: "a.plist").path
            let read = try SettingsExampleTests.runBuilt("settings", ["read", file])
            #expect(read.status == 0)
            #expect(read.output.contains("example.com"))
            #expect(read.output.contains("<redacted>"))
            #expect(!read.output.contains("hunter2") && !read.output.contains("tok-123"))
            #expect(try SettingsExampleTests.runBuilt("settings", ["read", file, "API/token"]).output == "<redacted>\n")
            let shown = try SettingsExampleTests.runBuilt("settings", ["read", "--show-secrets", file, "API/token"])
            #expect(shown.output == "tok-123\n")
        }
    }

    @Test func helpNamesShowSecrets() throws {
        for arguments in [["--help"], ["read", "--help"], ["print", "--help"], ["diff", "--help"]] {
            let help = try SettingsExampleTests.runBuilt("settings", arguments)
            #expect(help.output.contains("--show-secrets"), "settings \(arguments.joined(separator: " "))")
        }
    }

    @Test func printRedactsUnlessAsked() throws {
        try withFiles { dir in
            let file = dir.appending(path: "a.plist").path
            let printed = try SettingsExampleTests.runBuilt("settings", ["print", "--json", file])
            #expect(printed.status == 0)
            #expect(!printed.output.contains("hunter2") && printed.output.contains("<redacted>"))
            #expect(try SettingsExampleTests.runBuilt("settings", ["print", "--json", "--show-secrets", file]).output.contains("hunter2"))
        }
    }

    /// A machine format that redacted a value says so on standard error every time; a human
    /// one, or one with every value shown, does not (issue 31, item 6).
    @Test(arguments: ["--xml", "--json", "--typed-json"])
    func aMachineFormatThatRedactedSaysSo(format: String) throws {
        try withFiles { dir in
            let file = dir.appending(path: "a.plist").path
            let redacted = try CLI.run("print", format, file)
            #expect(redacted.status == 0)
            #expect(redacted.stderr.contains("\(file): values under secret-named keys are printed as <redacted>: this output is not a copy of the file"), "\(redacted.stderr)")
            #expect(try CLI.run("print", format, "--show-secrets", file).stderr.isEmpty)
            #expect(try CLI.run("print", "-p", file).stderr.isEmpty)
            let plain = dir.appending(path: "plain.plist").path
            try Data(#"<plist version="1.0"><dict><key>host</key><string>h</string></dict></plist>"#.utf8).write(to: URL(filePath: plain))
            #expect(try CLI.run("print", format, plain).stderr.isEmpty)
        }
    }

    @Test func diffSaysASecretChangedWithoutShowingIt() throws {
        try withFiles { dir in
            let a = dir.appending(path: "a.plist").path, b = dir.appending(path: "b.plist").path
            let diff = try SettingsExampleTests.runBuilt("settings", ["diff", a, b])
            #expect(diff.status == 1)
            #expect(diff.output.contains("API/token"))
            #expect(!diff.output.contains("tok-"))
            #expect(try SettingsExampleTests.runBuilt("settings", ["diff", "--show-secrets", a, b]).output.contains("tok-456"))
        }
    }
}
