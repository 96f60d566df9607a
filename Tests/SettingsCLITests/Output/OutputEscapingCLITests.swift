import Foundation
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Testing

/// Names that come from files others can write (key names, domain directories, device ids and
/// process names in provenance and history) print with their control characters escaped: a
/// forged name can neither print a line of its own nor drive the terminal.
struct OutputEscapingCLITests {
    static let forgedKey = "a\nset by root pid 1 at 2026-01-01 00:00:00 UTC\tsudoers"
    static let clearingKey = "\u{1B}[2Jb\u{7F}\u{85}"

    /// No byte of `text` is a control character but the newline that ends each line (and the
    /// tab between `history`'s columns), and it has `lines` lines.
    func expectClean(_ text: String, lines: Int, _ comment: Comment? = nil) {
        #expect(!text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }, comment)
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count == lines + 1, comment)
    }

    /// An application domain `App` holding the forged keys, written with the tool.
    func forgedDomain(in dir: TemporaryDirectory) throws -> [String: String] {
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: environment, "write", "App", Self.forgedKey, "1").status == 0)
        #expect(try CLI.run(environment: environment, "write", "App", Self.clearingKey, "2").status == 0)
        return environment
    }

    @Test func keysAndHistoryEscapeForgedKeyNames() throws {
        let dir = try TemporaryDirectory()
        let environment = try forgedDomain(in: dir)
        let keys = try CLI.run(environment: environment, "keys", "App")
        #expect(keys.status == 0)
        expectClean(keys.stdout, lines: 2, "\(keys.stdout)")
        #expect(keys.stdout == "a\\nset by root pid 1 at 2026-01-01 00:00:00 UTC\\tsudoers\n\\u{1B}[2Jb\\u{7F}\\u{85}\n")
        let history = try CLI.run(environment: environment, "history", "App")
        expectClean(history.stdout, lines: 2, "\(history.stdout)")
        #expect(history.stdout.contains("a\\nset by root pid 1 at 2026-01-01 00:00:00 UTC\\tsudoers\n"), "\(history.stdout)")
    }

    @Test func historyAndExplainEscapeForgedDeviceIdsAndProcessNames() throws {
        let dir = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: environment, "write", "App", "k", "1").status == 0)
        let target = dir.path("App/settings.plist")
        let forger = SettingsProvenance(origin: .sync, process: "sync\u{1B}[2J", pid: 7, date: Date(), device: "3F2A\n* user  forged: 1")
        try PlistHistory.keep(Data(try PlistValue.dictionary(["k": 1]).encodedBytes(as: .binary)), changed: [["k\nforged"]], by: forger, for: target)
        var log = try SettingsProvenanceLog.load(for: target)
        log.record([["k"]], in: ["k": 1], by: forger)
        try log.save(for: target)

        let history = try CLI.run(environment: environment, "history", "App")
        expectClean(history.stdout, lines: 2, "\(history.stdout)")
        #expect(history.stdout.contains("device 3F2A\\n* user  forged: 1"), "\(history.stdout)")
        #expect(history.stdout.contains("sync\\u{1B}[2J"), "\(history.stdout)")
        let explained = try CLI.run(environment: environment, "explain", "App", "k")
        #expect(explained.status == 0)
        expectClean(explained.stdout, lines: 2, "\(explained.stdout)")
        #expect(explained.stdout.contains("3F2A\\n* user  forged: 1"), "\(explained.stdout)")
    }

    @Test func domainsEscapesADomainNamedWithANewline() throws {
        let dir = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        let evil = dir.url.appending(path: "evil\nApp")
        try FileManager.default.createDirectory(at: evil, withIntermediateDirectories: true)
        try PlistValue.dictionary(["a": 1]).write(to: evil.appending(path: "settings.plist"))
        #expect(try CLI.run(environment: environment, "write", "Good", "a", "1").status == 0)
        let out = try CLI.run(environment: environment, "domains")
        #expect(out.stdout == "Good, evil\\nApp\n")
    }

    @Test func readAndExplainEscapeNamesInTheirMessages() throws {
        let dir = try TemporaryDirectory()
        let environment = try forgedDomain(in: dir)
        for arguments in [["read", "App", "x\u{1B}[2Jy"], ["read", "App", "a\nset"], ["explain", "App", "\u{1B}]0;title\u{07}"]] {
            let out = try CLI.run(arguments, environment: environment)
            expectClean(out.stderr, lines: out.stderr.split(separator: "\n").count, "\(arguments): \(out.stderr)")
            expectClean(out.stdout, lines: out.stdout.split(separator: "\n").count, "\(arguments): \(out.stdout)")
        }
        let missing = try CLI.run(["read", "App", "x\u{1B}[2Jy"], environment: environment)
        #expect(missing.stderr.contains("x\\u{1B}[2Jy"), "\(missing.stderr)")
    }

    @Test func diffAndHumanPrintEscapeKeysAndStrings() throws {
        let dir = try TemporaryDirectory()
        let a = dir.file("a.plist"), b = dir.file("b.plist")
        try PlistValue.dictionary([Self.forgedKey: "x\u{1B}[2Jy"]).write(to: a, format: .binary)
        try PlistValue.dictionary([Self.forgedKey: "z"]).write(to: b, format: .binary)
        let diff = try CLI.run("diff", a.path, b.path)
        #expect(diff.status == 1)
        expectClean(diff.stdout, lines: 1, "\(diff.stdout)")
        let printed = try CLI.run("-p", a.path)
        expectClean(printed.stdout, lines: 3, "\(printed.stdout)")
        #expect(printed.stdout.contains("\"x\\u{1B}[2Jy\""), "\(printed.stdout)")
    }

    @Test(arguments: [
        ("plain", "plain"), ("a\nb", "a\\nb"), ("tab\there", "tab\\there"), ("\u{1B}[31m", "\\u{1B}[31m"),
        ("del\u{7F}", "del\\u{7F}"), ("c1\u{9B}", "c1\\u{9B}"), ("\u{202E}txt", "\\u{202E}txt"), ("back\\slash", "back\\slash"),
    ])
    func oneEscapingRule(_ text: String, _ expected: String) throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("k.plist")
        try PlistValue.dictionary([text: 1]).write(to: file, format: .binary)  // XML cannot carry most of them
        let keys = try CLI.run("keys", file.path)
        // keys prints key paths, whose own rule writes a backslash as two.
        #expect(keys.stdout == expected.replacing("back\\slash", with: "back\\\\slash") + "\n")
    }
}
