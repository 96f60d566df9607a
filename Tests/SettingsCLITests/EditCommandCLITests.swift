import Foundation
import SettingsPlist
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `settings edit` as a user drives it: the real binary in a real pseudo-terminal (tmux), on a
/// domain a running program (SettingsExample --watch) keeps, with its schema and its
/// Settings.bundle panes, and an administrator's lock.
@Suite(.timeLimit(hangLimit))
struct EditCommandCLITests {
    /// Skips (with a message) where tmux is not installed; CI installs it.
    static var hasTmux: Bool { TmuxSession.executable != nil }

    /// The example's Settings.bundle, in the source tree.
    static let panes = URL(filePath: #filePath).deletingLastPathComponent()
        .appending(path: "../../Sources/SettingsExample/Settings.bundle/Root.plist").standardized.path

    /// A domain `App` under a temporary `XDG_CONFIG_HOME`, a system directory that locks
    /// `Network/proxy`, and (once ``startProgram()`` ran) the program that keeps the domain.
    final class Domain {
        let dir: TemporaryDirectory
        var home: String { dir.path("home") }
        var file: String { dir.path("home/App/settings.plist") }
        var locks: String { dir.path("xdg/App/locked.plist") }
        var log: String { dir.path("program.log") }
        var environment: [String: String] { ["XDG_CONFIG_HOME": home, "XDG_CONFIG_DIRS": dir.path("xdg")] }
        private var program: RunningProgram?

        init() throws {
            dir = try TemporaryDirectory()
            for sub in ["home/App", "xdg/App"] {
                try FileManager.default.createDirectory(atPath: dir.path(sub), withIntermediateDirectories: true)
            }
            try dir.writePlist("xdg/App/locked.plist", "<dict><key>Network</key><dict><key>proxy</key><string>http://proxy:3128</string></dict></dict>")
        }

        deinit {
            program = nil  // killed (and waited for) before its directory is removed
        }

        /// Starts SettingsExample --watch on the domain's file and waits until it has written
        /// the file and its schema and watches for changes. Its output (standard output and
        /// error) goes to ``log``, which the tests read; it is killed when the domain goes away.
        func startProgram() throws {
            program = try RunningProgram(CLI.executable.deletingLastPathComponent().appending(path: "SettingsExample"), ["--watch", file, "300"],
                                         environment: environment, outputFile: URL(filePath: log))
            try waitForFile(log, toContain: "watching")
        }

        /// The shell command that opens the editor on the domain (the environment given first).
        func editCommand(_ extra: [String: String] = [:], arguments: [String] = ["App", "--panes", EditCommandCLITests.panes]) -> String {
            let variables = environment.merging(extra) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\(EditCommandCLITests.quoted($0.value))" }
            return (["env"] + variables + [EditCommandCLITests.quoted(CLI.executable.path), "edit"]
                    + arguments.map(EditCommandCLITests.quoted)).joined(separator: " ")
        }

        func run(_ arguments: String...) throws -> ProgramOutput {
            try CLI.run(arguments, environment: environment)
        }

        /// The domain's file.
        func contents() throws -> PlistValue {
            try PlistValue(contentsOf: URL(filePath: file))
        }
    }

    /// `text` quoted for `sh`.
    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// Whether a captured screen (`capture-pane -e`) shows reverse video (tmux writes `ESC[7m`
    /// or `ESC[0;7m`).
    static func isReversed(_ screen: String) -> Bool {
        screen.contains("\u{1B}[7m") || screen.contains(";7m")
    }

    /// Waits until the program ended with `status` and the shell printed the terminal's modes
    /// (`stty -a`); returns the screen.
    static func waitForExit(_ tmux: TmuxSession, status: Int32) throws -> String {
        try tmux.waitFor("EXIT=\(status) and stty's modes") { $0.contains("EXIT=\(status)") && $0.contains("icanon") && $0.contains("echo") }
    }

    /// The screen line that shows `title`.
    static func line(_ title: String, in screen: String) -> String {
        screen.split(separator: "\n").first { $0.dropFirst(2).hasPrefix(title) }.map(String.init) ?? ""
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed: the editor's terminal tests need it (.ci/run installs it)"))
    func aUserEditsADomainARunningProgramKeeps() throws {
        let domain = try Domain()
        try domain.startProgram()
        let tmux = try TmuxSession(domain.editCommand())
        var screen = try tmux.waitFor("Auto play")
        #expect(screen.contains("settings edit App"))
        #expect(Self.line("Auto play", in: screen).contains("[ ] off"))
        #expect(Self.line("Volume", in: screen).contains("5 ■■■■■·····"), "a slider's bar: \(screen)")

        // Toggle: applied at once, and the running program sees it.
        try tmux.press("Space")
        try tmux.waitFor("toggled") { Self.line("Auto play", in: $0).contains("[x] on") && Self.line("Auto play", in: $0).contains("* user") }
        try waitForFile(domain.log, toContain: "change: autoPlay = true")

        // A number out of its range is refused with the reason, and nothing is written.
        try tmux.press("j", "Enter", "C-u")
        try tmux.type("42")
        try tmux.press("Enter")
        screen = try tmux.waitFor("42 is out of range: 0…10")
        try tmux.press("Escape")
        try tmux.waitFor("Volume: not changed")

        // A choice from the pane's Titles.
        try tmux.press("j", "Enter")
        try tmux.waitFor("Choose Theme")
        try tmux.press("j", "j", "Enter")
        try tmux.waitFor("picked Dark") { Self.line("Theme", in: $0).contains("‹ Dark ›") }
        try waitForFile(domain.log, toContain: "change: theme = \"dark\"")

        // A PSTitleValueSpecifier is read-only.
        try tmux.press("j", "Enter")
        try tmux.waitFor("Launches is read-only")

        // The child pane; a secret typed there never appears on the screen.
        try tmux.press("j", "Enter")
        try tmux.waitFor("settings edit App › Account")
        try tmux.press("Enter")
        try tmux.type("hunter2-secret")
        screen = try tmux.waitFor("••••••••••••••")
        #expect(!screen.contains("hunter2"))
        try tmux.press("Enter")
        screen = try tmux.waitFor("API token set")
        #expect(!screen.contains("hunter2"))
        #expect(Self.line("API token", in: screen).contains("••••••••"))
        try waitForFile(domain.log, toContain: "change: apiToken = <redacted>")
        try tmux.press("Escape")

        // The locked key: shown disabled with the file that locks it, and not editable.
        try tmux.waitFor("Proxy")
        try tmux.press("G")
        screen = try tmux.waitFor("Network/proxy: locked by \(domain.locks.prefix(40))")  // the path, as far as 80 columns show it
        #expect(Self.line("Proxy", in: screen).contains("locked"))
        try tmux.press("Enter")
        try tmux.waitFor("Proxy is locked by \(domain.locks.prefix(40))")

        // A change made elsewhere appears at once.
        #expect(try domain.run("write", "App", "Network/timeout", "-float", "45").status == 0)
        try tmux.waitFor("the outside write") { Self.line("Timeout", in: $0).contains("45") }
        try waitForFile(domain.log, toContain: "\"timeout\": 45.0")

        // Reset the page: every key on it that may change goes back to its default, in one change.
        try tmux.press("R")
        screen = try tmux.waitFor("4 keys reset to their defaults")
        #expect(Self.line("Auto play", in: screen).contains("[ ] off"))
        #expect(Self.line("Theme", in: screen).contains("‹ System ›"))
        #expect(Self.line("Proxy", in: screen).contains("locked"))

        // Restore the generation before the reset, from the history pane.
        try tmux.press("H")
        screen = try tmux.waitFor("History (newest first)")
        try tmux.press("j", "Enter")
        screen = try tmux.waitFor("restored generation")
        #expect(Self.line("Theme", in: screen).contains("‹ Dark ›"))
        #expect(Self.line("Auto play", in: screen).contains("[x] on"))

        // Quit: no question, the terminal is as it was.
        try tmux.press("q")
        screen = try Self.waitForExit(tmux, status: 0)
        #expect(screen.contains(" icanon") && screen.contains(" echo"), "\(screen)")
        #expect(try !tmux.isOnAlternateScreen())

        // The file holds what was applied; the refused volume was never written.
        let contents = try domain.contents()
        #expect(contents["autoPlay"] == true)
        #expect(contents["theme"] == "dark")
        #expect(contents["apiToken"] == "hunter2-secret")
        #expect(contents["Network"]?["timeout"] == 45.0)
        #expect(contents["volume"] == nil)
        // One generation per applied change, by the tool (the restore made on the screen too).
        let history = try domain.run("history", "App").stdout.split(separator: "\n").map(String.init)
        let byTheTool = history.filter { $0.contains("set with the settings tool") }
        #expect(byTheTool.count == 6, "\(history)")  // toggle, theme, token, the outside write, the reset, the restore
        let keys = byTheTool.map { $0.split(separator: "\t").last.map(String.init) ?? "" }
        #expect(keys.prefix(4) == ["autoPlay", "theme", "apiToken", "Network/timeout"], "\(history)")
        #expect(keys.dropLast().last.map { $0.contains("autoPlay") && $0.contains("theme") && $0.contains("Network/timeout") } == true, "\(history)")
        #expect(history.last?.contains("set with the settings tool") == true, "\(history)")
        let log = try String(contentsOfFile: domain.log, encoding: .utf8)
        #expect(!log.contains("hunter2"))
    }

    @Test func theSettingsBundleTheProgramRegisteredIsFoundWithoutBeingNamed() throws {
        let domain = try Domain()
        try domain.startProgram()  // registers its defaults from Settings.bundle/Root.plist
        // The editor lays the screen out by the program's panes without --panes: the read-only
        // title value and the child pane come only from Root.plist.
        let screen = try domain.run("edit", "App", "--print-screen")
        #expect(screen.status == 0, "\(screen.output)")
        #expect(screen.stdout.contains("Launches") && screen.stdout.contains("Account  ›"), "\(screen.stdout)")
        // explain reads a registered pane as the library does: its DefaultValues are the defaults.
        let explained = try domain.run("explain", "App", "theme")
        #expect(explained.status == 0)
        #expect(explained.stdout.hasPrefix("theme = system (from defaults: ") && explained.stdout.contains("Root.plist"), "\(explained.output)")
    }

    @Test func refusesToStartWithoutATerminal() throws {
        let domain = try Domain()
        #expect(try domain.run("write", "App", "autoPlay", "-bool", "YES").status == 0)
        let before = try Data(contentsOf: URL(filePath: domain.file))
        let out = try domain.run("edit", "App")
        #expect(out.status == 2)
        #expect(out.stderr == "settings: edit: standard input and output must be a terminal (use 'settings write' in scripts)\n")
        #expect(out.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(filePath: domain.file)) == before)
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func anEditInProgressShowsAConflictingOutsideChangeAndDoesNotWriteOverIt() throws {
        let domain = try Domain()
        try domain.startProgram()
        let tmux = try TmuxSession(domain.editCommand())
        try tmux.waitFor("Timeout")
        try tmux.press("/")
        try tmux.type("timeout")
        try tmux.press("Enter", "Enter", "C-u")
        try tmux.type("60")
        #expect(try domain.run("write", "App", "Network/timeout", "-float", "50").status == 0)
        try tmux.waitFor("Timeout changed elsewhere to 50")
        #expect(try domain.contents()["Network"]?["timeout"] == 50.0)
        try tmux.press("Enter")  // seen: now it is written
        try tmux.waitFor("Timeout = 60")
        #expect(try domain.contents()["Network"]?["timeout"] == 60.0)
    }

    /// SIGINT, SIGTERM and crash signals sent from outside (SIGSEGV, SIGABRT) end it with the
    /// terminal put back; nothing but applied changes is written.
    @Test(.enabled(if: hasTmux, "tmux is not installed"), arguments: [SIGINT, SIGTERM, SIGSEGV, SIGABRT])
    func theTerminalIsRestoredWhenTheEditorIsKilled(signal: Int32) throws {
        let domain = try Domain()
        #expect(try domain.run("write", "App", "theme", "light").status == 0)
        let before = try Data(contentsOf: URL(filePath: domain.file))
        let tmux = try TmuxSession(domain.editCommand(arguments: ["App"]))
        try tmux.waitFor("theme")
        #expect(try tmux.isOnAlternateScreen())
        try tmux.press("Enter")  // an edit in progress is not written
        try tmux.type("half-typed")
        try tmux.waitFor("half-typed")
        if signal == SIGINT {
            try tmux.press("C-c")
        } else {
            let pid = try #require(try tmux.programPID())
            kill(pid, signal)
        }
        let screen = try Self.waitForExit(tmux, status: 128 + signal)
        #expect(screen.contains(" icanon") && screen.contains(" echo"), "\(screen)")
        #expect(try !tmux.isOnAlternateScreen())
        #expect(try Data(contentsOf: URL(filePath: domain.file)) == before)
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func aStopPutsTheTerminalBackAndContinuingRedrawsTheScreen() throws {
        let domain = try Domain()
        #expect(try domain.run("write", "App", "theme", "light").status == 0)
        let tmux = try TmuxSession(domain.editCommand(arguments: ["App"]))
        try tmux.waitFor("theme")
        let pid = try #require(try tmux.programPID())
        kill(pid, SIGTSTP)
        try tmux.waitFor("the normal screen", { _ in (try? tmux.isOnAlternateScreen()) == false })
        kill(pid, SIGCONT)
        try tmux.waitFor("the editor again") { $0.contains("settings edit App") && ((try? tmux.isOnAlternateScreen()) ?? false) }
        try tmux.press("q")
        let screen = try Self.waitForExit(tmux, status: 0)
        #expect(screen.contains(" icanon"))
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func aResizeDrawsTheScreenForTheNewSize() throws {
        let domain = try Domain()
        #expect(try domain.run("write", "App", "theme", "light").status == 0)
        let tmux = try TmuxSession(domain.editCommand(arguments: ["App"]))
        var screen = try tmux.waitFor("theme")
        #expect(screen.contains(String(repeating: "─", count: 80)))
        try tmux.tmux(["resize-window", "-t", "edit", "-x", "100", "-y", "30"])
        screen = try tmux.waitFor("a 100-column rule") { $0.contains(String(repeating: "─", count: 100)) }
        #expect(screen.split(separator: "\n", omittingEmptySubsequences: false).last { $0.contains("q quit") } != nil)
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func noColorDrawsWithoutAttributes() throws {
        let domain = try Domain()
        #expect(try domain.run("write", "App", "theme", "light").status == 0)
        let colored = try TmuxSession(domain.editCommand(["NO_COLOR": ""], arguments: ["App"]))
        try colored.waitFor("theme")
        #expect(try Self.isReversed(colored.screen(escapes: true)))
        let plain = try TmuxSession(domain.editCommand(["NO_COLOR": "1"], arguments: ["App"]))
        try plain.waitFor("theme")
        #expect(try !Self.isReversed(plain.screen(escapes: true)))
        #expect(try !plain.screen(escapes: true).contains("\u{1B}[1m"))
        #expect(try plain.screen().contains("> theme"))
    }

    @Test(.enabled(if: hasTmux, "tmux is not installed"))
    func aDumbTerminalGetsALineOrientedPrompt() throws {
        let domain = try Domain()
        try domain.startProgram()
        let tmux = try TmuxSession(domain.editCommand(["TERM": "dumb"]))
        try tmux.waitFor("1. Auto play: [ ] off (default)")
        #expect(try !tmux.isOnAlternateScreen())
        try tmux.type("1")
        try tmux.press("Enter")
        try tmux.waitFor("Auto play = [x] on")
        try tmux.type("2")
        try tmux.press("Enter")
        // Typed only once asked: keys sent earlier would be echoed before the prompt, and the
        // prompt and the refusal would then share a line wrapped at 80 columns.
        try tmux.waitFor("new value (empty cancels):")
        try tmux.type("11")
        try tmux.press("Enter")
        try tmux.waitFor("not changed: 11 is out of range: 0…10")
        try tmux.type("q")
        try tmux.press("Enter")
        try tmux.waitFor("EXIT=0")
        #expect(try domain.contents()["autoPlay"] == true)
        try waitForFile(domain.log, toContain: "change: autoPlay = true")
    }
}
