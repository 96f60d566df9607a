import Foundation
import SettingsTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A program run in a real pseudo-terminal: a detached tmux session on a socket of its own,
/// driven with `send-keys` and read with `capture-pane`, as a user at an 80×24 terminal would.
final class TmuxSession {
    /// The tmux binary, or `nil` when it is not installed (the tests that need it say so).
    static let executable: URL? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"]
        .map { URL(filePath: $0) }.first { FileManager.default.isExecutableFile(atPath: $0.path) }

    let program: URL
    let socket: String

    /// Starts `command` (run by `sh -c`) in a new session of `columns`×`rows`. After the command
    /// ends, the pane prints `EXIT=<status>` and the terminal's modes (`stty -a`), then waits.
    init(_ command: String, columns: Int = 80, rows: Int = 24) throws {
        guard let tmux = Self.executable else { throw Missing() }
        program = tmux
        socket = "settings-edit-\(getpid())-\(UUID().uuidString.prefix(8))"
        let script = "trap : INT; \(command); echo EXIT=$?; stty -a; exec cat"  // the trap keeps the shell alive after Ctrl-C
        // The server this starts keeps every descriptor it was given (a pipe would not end),
        // and Foundation's Process did not see this client end: posix_spawn and waitpid, with
        // the standard streams on /dev/null.
        let path: String = tmux.path
        let argv = [path, "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "edit",
                    "-x", "\(columns)", "-y", "\(rows)", "sh", "-c", script].map { (text: String) in strdup(text) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // A test thread blocks signals; the server and the program under test must not inherit
        // that (a blocked SIGHUP would keep the pane alive after kill-server).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        guard posix_spawn(&pid, path, &actions, &attributes, argv, environ) == 0 else { throw Failed(message: "cannot start tmux") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard status == 0 else { throw Failed(message: "tmux new-session ended with status \(status)") }
    }

    struct Missing: Error {}
    struct Failed: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    deinit {
        _ = try? runProgram(program, ["-L", socket, "kill-server"])
        // The server does not always remove its socket file: the test leaves nothing behind.
        let directory = (ProcessInfo.processInfo.environment["TMUX_TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/tmux-\(getuid())"
        try? FileManager.default.removeItem(atPath: directory + "/" + socket)
    }

    /// Runs a tmux command against the session.
    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        let out = try runProgram(program, ["-L", socket] + arguments)
        guard out.status == 0 else { throw Failed(message: "tmux \(arguments.joined(separator: " ")): \(out.output)") }
        return out.stdout
    }

    /// Presses keys, by tmux's names (`Enter`, `Escape`, `Up`, `C-c`, `j`).
    func press(_ keys: String...) throws {
        try tmux(["send-keys", "-t", "edit"] + keys)
    }

    /// Types text literally.
    func type(_ text: String) throws {
        try tmux(["send-keys", "-t", "edit", "-l", text])
    }

    /// The screen as text, one line per row.
    func screen(escapes: Bool = false) throws -> String {
        try tmux(["capture-pane", "-p", "-t", "edit"] + (escapes ? ["-e"] : []))
    }

    /// The process id of the pane's shell's child (the program under test), when it runs.
    func programPID() throws -> Int32? {
        let shell = try tmux(["list-panes", "-t", "edit", "-F", "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let children = (try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").first.flatMap { Int32($0) }
    }

    /// Whether the pane shows the alternate screen now.
    func isOnAlternateScreen() throws -> Bool {
        try tmux(["display-message", "-p", "-t", "edit", "#{alternate_on}"]).hasPrefix("1")
    }

    /// Waits until `condition` holds for the screen, polling it; fails after `seconds`
    /// (``patience`` unless given).
    @discardableResult
    func waitFor(_ what: String, seconds: Double = patience, _ condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            last = try screen()
            if condition(last) { return last }
            usleep(20_000)  // polling interval, not a wait for the program: the deadline bounds it
        }
        throw Failed(message: "waited \(seconds) s for \(what); the screen is:\n\(last)")
    }

    /// Waits until the screen shows `text`.
    @discardableResult
    func waitFor(_ text: String, seconds: Double = patience) throws -> String {
        try waitFor("'\(text)'", seconds: seconds) { $0.contains(text) }
    }
}

/// How long the waits on a screen or a log last by default: a wait ends as soon as what it waits
/// for is there, so only a failing test pays for the bound, which must hold on a machine that runs
/// every test at once under ThreadSanitizer (20 s did not, for a running program's log).
let patience: Double = 120

/// Waits until `file` holds `text` (a log a running program writes), polling; fails after `seconds`.
@discardableResult
func waitForFile(_ file: String, toContain text: String, seconds: Double = patience) throws -> String {
    let deadline = Date().addingTimeInterval(seconds)
    var last = ""
    while Date() < deadline {
        // Decoded leniently: a log may hold bytes that are not UTF-8 for a moment (a write that
        // splits a character) or for good (another program's report on standard error).
        last = String(decoding: FileManager.default.contents(atPath: file) ?? Data(), as: UTF8.self)
        if last.contains(text) { return last }
        usleep(20_000)
    }
    throw TmuxSession.Failed(message: "waited \(seconds) s for '\(text)' in \(file); it holds:\n\(last)")
}
