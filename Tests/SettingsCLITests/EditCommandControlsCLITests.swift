import Foundation
import SettingsPlist
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `settings edit`'s controls and panes as a user drives them in a real pseudo-terminal (tmux):
/// the list and dictionary pages, the date picker, a refusal's reason under its field, the
/// history pane's old → new values, a crash of the editor's own code, the prompt mode's live
/// changes, and wide characters.
@Suite(.timeLimit(hangLimit))
struct EditCommandControlsCLITests {
    typealias Domain = EditCommandCLITests.Domain
    static var hasTmux: Bool { TmuxSession.executable != nil }

    /// The screen's line that shows `label` after the two-column cursor mark.
    static func line(_ label: String, in screen: String) -> String {
        EditCommandCLITests.line(label, in: screen)
    }

    /// A domain the tool wrote `writes` to (each `KEY [-TYPE] VALUE`), and the editor opened on
    /// it (with `environment`) once the screen shows `text`.
    static func editor(after writes: [[String]], environment: [String: String] = [:], showing text: String) throws -> (Domain, TmuxSession) {
        let domain = try Domain()
        for write in writes {
            let out = try CLI.run(["write", "App"] + write, environment: domain.environment)
            #expect(out.status == 0, "\(out.output)")
        }
        let tmux = try TmuxSession(domain.editCommand(environment, arguments: ["App"]))
        try tmux.waitFor(text)
        return (domain, tmux)
    }

    /// The generations the history keeps, one line each.
    static func history(_ domain: Domain) throws -> [String] {
        try domain.run("history", "App").stdout.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func listsAndDictionariesAreEditedOnPagesOfTheirOwnOneChangeEach() throws {
        let domain = try Domain()
        try domain.dir.writePlist("home/App/settings.plist", """
            <dict><key>servers</key><array><string>a</string><string>b</string>
            <dict><key>host</key><string>h</string><key>port</key><integer>1</integer></dict></array></dict>
            """)
        let generations = try Self.history(domain).count
        let tmux = try TmuxSession(domain.editCommand(arguments: ["App"]))
        try tmux.waitFor("( 3 items )")
        try tmux.press("Enter")
        var screen = try tmux.waitFor("settings edit App › servers")
        #expect(Self.line("[0]", in: screen).contains("a") && Self.line("[0]", in: screen).contains("string"), "\(screen)")
        #expect(Self.line("[2]", in: screen).contains("{ 2 keys }"), "\(screen)")

        // An element edited with its type's control.
        try tmux.press("Enter", "C-u")
        try tmux.type("alpha")
        try tmux.press("Enter")
        try tmux.waitFor("the edited element") { Self.line("[0]", in: $0).contains("alpha") }
        #expect(try domain.contents()["servers"] == ["alpha", "b", ["host": "h", "port": 1]])

        // Added, moved down, deleted.
        try tmux.press("a")
        try tmux.waitFor("add to servers:")
        try tmux.type("c")
        try tmux.press("Enter")
        try tmux.waitFor("the added element") { Self.line("[3]", in: $0).contains("c") }
        try tmux.press("J")
        try tmux.waitFor("the moved element") { Self.line("[1]", in: $0).contains("alpha") }
        #expect(try domain.contents()["servers"] == ["b", "alpha", ["host": "h", "port": 1], "c"])
        try tmux.press("d")
        try tmux.waitFor("the deleted element") { Self.line("[1]", in: $0).contains("{ 2 keys }") }
        #expect(try domain.contents()["servers"] == ["b", ["host": "h", "port": 1], "c"])

        // A nested dictionary opens a page of its own: an entry changed, one added; Esc goes back.
        try tmux.press("Enter")
        screen = try tmux.waitFor("settings edit App › servers › [1]")
        try tmux.press("j", "Enter", "C-u")
        try tmux.type("8080")
        try tmux.press("Enter")
        try tmux.waitFor("the port") { Self.line("port", in: $0).contains("8080") && Self.line("port", in: $0).contains("integer") }
        try tmux.press("a")
        try tmux.type("tls = true")
        try tmux.press("Enter")
        try tmux.waitFor("the new entry") { Self.line("tls", in: $0).contains("[x] true") }
        try tmux.press("Escape")
        try tmux.waitFor("back on the list") { !$0.contains("› [1]") && $0.contains("settings edit App › servers") }
        try tmux.press("Escape")
        try tmux.waitFor("back on the keys") { Self.line("servers", in: $0).contains("( 3 items )") }
        try tmux.press("q")
        _ = try EditCommandCLITests.waitForExit(tmux, status: 0)

        #expect(try domain.contents()["servers"] == ["b", ["host": "h", "port": 8080, "tls": true], "c"])
        // Each applied change is one generation by the tool: edit, add, move, delete, port, tls.
        let history = try Self.history(domain)
        #expect(history.count == generations + 6, "\(history)")
        #expect(history.suffix(6).allSatisfy { $0.contains("set with the settings tool") && $0.hasSuffix("\tservers") }, "\(history)")
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func aDateIsPickedFieldByFieldOrTypedAsISOText() throws {
        let (domain, tmux) = try Self.editor(after: [["updated", "-date", "2024-05-17T09:30:00Z"]], showing: "2024-05-17T09:30:00Z")
        try tmux.press("Enter")
        try tmux.waitFor(" updated: [2024]-05-17 09:30:00 UTC")
        // Right to the month, Up: June; right to the day, typed 02; Down on the hour: 08.
        try tmux.press("Right", "Up")
        try tmux.waitFor(" updated: 2024-[06]-17 09:30:00 UTC")
        try tmux.press("Right")
        try tmux.type("02")
        try tmux.waitFor(" updated: 2024-06-02 [09]:30:00 UTC")
        try tmux.press("Down")
        try tmux.waitFor(" updated: 2024-06-02 [08]:30:00 UTC")
        try tmux.press("Enter")
        try tmux.waitFor("the picked date") { Self.line("updated", in: $0).contains("2024-06-02T08:30:00Z") }
        #expect(try domain.contents()["updated"] == .date(try #require(ISO8601DateFormatter().date(from: "2024-06-02T08:30:00Z"))))

        // A day the month does not have is refused; Esc cancels.
        try tmux.press("Enter", "Right", "Right")
        try tmux.type("31")
        try tmux.press("Enter")
        try tmux.waitFor("day 31 is not 1…30 in 2024-06")
        try tmux.press("Escape")
        try tmux.waitFor("updated: not changed")

        // ISO text typed whole is still taken.
        try tmux.press("Enter")
        try tmux.type("2025-01-31T23:59:58Z")
        try tmux.press("Enter")
        try tmux.waitFor("the typed date") { Self.line("updated", in: $0).contains("2025-01-31T23:59:58Z") }
        try tmux.press("q")
        _ = try EditCommandCLITests.waitForExit(tmux, status: 0)
        #expect(try domain.contents()["updated"] == .date(try #require(ISO8601DateFormatter().date(from: "2025-01-31T23:59:58Z"))))
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func aRefusalsReasonStaysUnderItsFieldUntilTheFieldIsEditedOrTheCursorMoves() throws {
        let domain = try Domain()
        try domain.startProgram()
        let tmux = try TmuxSession(domain.editCommand())
        try tmux.waitFor("Volume")
        try tmux.press("j", "Enter", "C-u")
        try tmux.type("42")
        try tmux.press("Enter")
        var screen = try tmux.waitFor("42 is out of range: 0…10")
        var rows = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var at = try #require(rows.firstIndex { $0.hasPrefix("> Volume") }, "\(screen)")
        #expect(rows[at + 1].contains("↳ 42 is out of range: 0…10"), "\(screen)")
        // Typing again edits the field: the reason goes.
        try tmux.press("BSpace")
        try tmux.waitFor("the reason gone") { !$0.contains("↳") }
        try tmux.press("Escape")

        // A locked key's refusal, under it until the cursor moves.
        try tmux.press("G", "Enter")
        screen = try tmux.waitFor("↳ Proxy is locked by")
        rows = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        at = try #require(rows.firstIndex { $0.hasPrefix("> Proxy") }, "\(screen)")
        #expect(rows[at + 1].contains("↳ Proxy is locked by"), "\(screen)")
        try tmux.press("k")
        try tmux.waitFor("the reason gone after a move") { !$0.contains("↳") }
        try tmux.press("q")
        _ = try EditCommandCLITests.waitForExit(tmux, status: 0)
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func theHistoryPaneShowsEachChangedKeysOldAndNewValueWithSecretsMasked() throws {
        let writes = [["theme", "light"], ["theme", "dark"], ["apiToken", "first-s3cret"], ["apiToken", "second-s3cret"]]
        let (domain, tmux) = try Self.editor(after: writes, showing: "theme")
        try tmux.press("H")
        let screen = try tmux.waitFor("theme: light → dark")
        #expect(screen.contains("apiToken: •••••••• → ••••••••"), "\(screen)")
        #expect(screen.contains("theme: (not set) → light"), "\(screen)")
        #expect(!screen.contains("s3cret"), "\(screen)")
        #expect(try domain.contents()["theme"] == "dark")  // (and the domain's directory is kept until here)
    }

    /// The history pane's restore is a change made on the screen: origin `tool`, as every other
    /// (`settings restore` keeps its own origin, `restore`).
    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func aRestoreFromTheHistoryPaneIsRecordedAsTheTools() throws {
        let (domain, tmux) = try Self.editor(after: [["theme", "light"], ["theme", "dark"]], showing: "theme")
        try tmux.press("H")
        try tmux.waitFor("theme: light → dark")
        try tmux.press("j", "Enter")
        try tmux.waitFor("restored generation 1")
        try tmux.press("q")
        _ = try EditCommandCLITests.waitForExit(tmux, status: 0)
        #expect(try domain.contents()["theme"] == "light")
        var history = try Self.history(domain)
        #expect(history.count == 3 && history.last?.contains("set with the settings tool") == true, "\(history)")
        #expect(try domain.run("restore", "App", "2").status == 0)
        history = try Self.history(domain)
        #expect(history.last?.contains("restored from history") == true, "\(history)")
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func aCrashOfTheEditorsOwnCodePutsTheTerminalBack() throws {
        let (domain, tmux) = try Self.editor(after: [["theme", "light"]], environment: ["SETTINGS_EDIT_TEST_CRASH": "1"], showing: "theme")
        let before = try Data(contentsOf: URL(filePath: domain.file))
        #expect(try tmux.isOnAlternateScreen())
        #expect(try tmux.tmux(["display-message", "-p", "-t", "edit", "#{cursor_flag}"]).hasPrefix("0"))
        try tmux.press("j")  // the editor's own code traps on this key
        let screen = try tmux.waitFor("the shell after the crash") { text in
            text.range(of: #"EXIT=13[2-4]"#, options: .regularExpression) != nil && text.contains("icanon") && text.contains("echo")
        }
        #expect(screen.contains(" icanon") && screen.contains(" echo") && !screen.contains("-icanon") && !screen.contains("-echo "), "\(screen)")
        #expect(try !tmux.isOnAlternateScreen())
        #expect(try tmux.tmux(["display-message", "-p", "-t", "edit", "#{cursor_flag}"]).hasPrefix("1"))
        #expect(try Data(contentsOf: URL(filePath: domain.file)) == before)
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func thePromptTellsAChangeMadeElsewhereWithoutAKeyPressed() throws {
        let (domain, tmux) = try Self.editor(after: [["theme", "light"]], environment: ["TERM": "dumb"], showing: "1. theme: light (user")
        #expect(try domain.run("write", "App", "theme", "dark").status == 0)
        try tmux.waitFor("changed elsewhere: theme = dark")
        #expect(try domain.run("write", "App", "apiToken", "hunter2").status == 0)
        let screen = try tmux.waitFor("changed elsewhere: apiToken = ••••••••")
        #expect(!screen.contains("hunter2"))
        try tmux.type("q")
        try tmux.press("Enter")
        _ = try EditCommandCLITests.waitForExit(tmux, status: 0)
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func wideCharactersTakeTwoColumnsSoNoLineWraps() throws {
        let cjk = String(repeating: "設定", count: 30), emoji = String(repeating: "🎉", count: 40)
        let (domain, tmux) = try Self.editor(after: [["cjk", cjk], ["emoji", emoji]], showing: "emoji")
        // The whole frame, down to its last row: a screen taken as soon as "emoji" showed was
        // once (under ThreadSanitizer, in a full CI run) caught half-drawn.
        let screen = try tmux.waitFor("q quit")
        // Each row ends with its layer: the value was cut to its column, not wrapped.
        for key in ["cjk", "emoji"] {
            let line = Self.line(key, in: screen)
            #expect(line.contains("…") && line.hasSuffix("* user"), "\(screen)")
        }
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(rows.count >= 24 && rows[23].contains("q quit"), "\(screen)")
        #expect(try domain.contents()["cjk"] == .string(cjk))
    }
}
