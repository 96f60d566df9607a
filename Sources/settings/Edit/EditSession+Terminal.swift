#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles
import Synchronization

extension EditSession {
    /// How often the file is looked at (its identity, by `stat`) while no key comes.
    static let pollMilliseconds: Int32 = 200

    /// For tests only: with this variable set to `1`, the full screen traps (a failed
    /// precondition, in the editor's own code) on the first key pressed, so a test sees the
    /// terminal put back after a crash that no outside signal caused. Not for users.
    static let testCrashVariable = "SETTINGS_EDIT_TEST_CRASH"

    /// The full screen: raw keys, the alternate screen, only changed lines drawn again; the
    /// terminal put back on every way out (``Terminal``).
    mutating func fullScreen(color: Bool) throws(CLIError) {
        guard Terminal.enter() else { throw .trouble("edit: cannot set up the terminal (\(String(cString: strerror(errno))))") }
        Console.holdErrors()
        defer {
            Terminal.restore()
            Console.releaseErrors()
        }
        var frame = EditFrame(color: color)
        (screen.rows, screen.columns) = Terminal.size()
        let crashes = SettingsLocations.processEnvironment(Self.testCrashVariable) == "1"
        while true {
            let resized = Terminal.resized.exchange(false, ordering: .sequentiallyConsistent)
            if Terminal.continued.exchange(false, ordering: .sequentiallyConsistent) || resized {
                (screen.rows, screen.columns) = Terminal.size()
                frame.invalidate()
            }
            let lines = screen.lines()
            screen.top = screen.scrolledTop
            Terminal.show(frame.draw(lines))
            let keys = Terminal.keys(waitingAtMost: Self.pollMilliseconds)
            // Test-only: the editor's own code traps while the screen is up (see testCrashVariable).
            precondition(!crashes || keys.isEmpty, "\(Self.testCrashVariable)=1: the editor traps on a key, as its tests ask")
            for key in keys {
                if let action = screen.handle(key), !perform(action) { return }
            }
            reloadIfChanged()
            for line in Console.takeHeldErrors() { screen.message = line }
        }
    }

    /// `TERM=dumb`: a numbered list and a prompt, one line at a time (a screen reader follows it).
    mutating func prompt() throws(CLIError) {
        Console.print("settings edit \(domain.argument): type a number to change that key, 'r N' to reset it, 'l' to list, 'h' for history, 'q' to quit.")
        listFields()
        while true {
            reloadIfChanged()
            guard let line = readLineAnnouncingChanges("> ") else { return }
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case nil: continue
            case "q"?, "quit"?: return
            case "l"?, "list"?: listFields()
            case "?"?, "help"?:
                Console.print("N: change key N   r N: reset key N   l: list   h: history   u N: restore generation N   q: quit")
            case "h"?, "history"?:
                loadHistory()
                if screen.history.isEmpty { Console.print("no history kept yet") }
                for generation in screen.history { Console.print("\(generation.number)  \(generation.text)") }
            case "u"?:
                guard words.count == 2, let number = Int(words[1]) else { Console.print("usage: u GENERATION"); continue }
                report(.restore(generation: number))
            case "r"?:
                guard words.count == 2, let index = field(words[1]) else { Console.print("usage: r N (a number from the list)"); continue }
                report(.set(field: index, value: nil, expected: screen.states[index].userValue))
            default:
                guard words.count == 1, let index = field(words[0]) else { Console.print("unknown command '\(line)': type ? for help"); continue }
                change(index)
            }
        }
    }

    /// The field numbered `text` in the list (from 1).
    private func field(_ text: String) -> Int? {
        guard let number = Int(text), number >= 1, number <= screen.layout.fields.count else { return nil }
        return number - 1
    }

    private func listFields() {
        for index in screen.layout.fields.indices {
            let field = screen.layout.fields[index], state = screen.states[index]
            var line = "\(index + 1). \(field.title): \(screen.shownValue(index, nil)) (\(state.layer)"
            if let file = state.lockedBy { line += ", locked by \(file)" }
            if screen.isChanged(index) { line += ", changed" }
            Console.print((line + ")").escapingControlCharacters)
        }
    }

    private mutating func change(_ index: Int) {
        let field = screen.layout.fields[index], state = screen.states[index]
        if let file = state.lockedBy { Console.print("\(field.title) is locked by \(file)"); return }
        switch field.control {
        case .readOnly:
            Console.print("\(field.title) is read-only")
        case .toggle(let on, let off):
            report(.set(field: index, value: state.value == on ? off : on, expected: state.userValue))
        case .choice(let values, let titles):
            for i in values.indices { Console.print("  \(i + 1). \(titles[i])\(values[i] == state.value ? " (current)" : "")") }
            guard let answer = Self.readLine("choice (empty cancels): "), let n = Int(answer), n >= 1, n <= values.count else {
                Console.print("not changed")
                return
            }
            report(.set(field: index, value: values[n - 1], expected: state.userValue))
        default:
            let current = field.isSecret ? "" : " (now \(screen.shownValue(index, nil)))"
            guard let text = Self.readLine("\(field.title)\(current), new value (empty cancels): ", hidden: field.isSecret), !text.isEmpty else {
                Console.print("not changed")
                return
            }
            switch EditScreen.parse(text, for: field) {
            case .success(let value): report(.set(field: index, value: value, expected: state.userValue))
            case .failure(let reason): Console.print("not changed: \(reason.message)")
            }
        }
    }

    /// A line typed at the prompt; while none comes, the file is looked at as often as the full
    /// screen looks at it, and a change made elsewhere is told at once, a line per key
    /// ("changed elsewhere: KEY = VALUE"), with the prompt again under it. `nil` at the end of
    /// input.
    private mutating func readLineAnnouncingChanges(_ prompt: String) -> String? {
        Console.write(Array(prompt.utf8))
        var line: [UInt8] = []
        while true {
            var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.pollMilliseconds)
            if ready == 1 {
                var byte: UInt8 = 0
                let count = read(0, &byte, 1)
                if count == 1 {
                    if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
                    line.append(byte)
                    continue
                }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
            }
            if ready < 0 && errno != EINTR { return nil }
            let (fields, states) = (screen.layout.fields, screen.states)
            guard reloadIfChanged() else { continue }
            let told = Self.changes(from: fields, states, to: screen.layout.fields, screen.states)
            guard !told.isEmpty else { continue }
            Console.print("")
            for text in told { Console.print(text.escapingControlCharacters) }
            Console.write(Array(prompt.utf8) + line)
        }
    }

    /// A line per key whose value or layer differs between two readings of the file
    /// ("changed elsewhere: KEY = VALUE"; a secret masked; a key gone `(not set)`).
    static func changes(from oldFields: [EditField], _ oldStates: [EditState], to newFields: [EditField], _ newStates: [EditState]) -> [String] {
        var old: [[String]: EditState] = [:]
        for (field, state) in zip(oldFields, oldStates) { old[field.path] = state }
        var lines: [String] = []
        for (field, state) in zip(newFields, newStates) {
            let was = old.removeValue(forKey: field.path)
            guard was?.value != state.value || was?.layer != state.layer else { continue }
            let shown = state.value.map { field.isSecret ? EditScreen.masked : Render.oneLine($0) } ?? "(not set)"
            lines.append("changed elsewhere: \(field.keyPath) = \(shown)")
        }
        for field in oldFields where old[field.path] != nil {
            lines.append("changed elsewhere: \(field.keyPath) = (not set)")
        }
        return lines
    }

    /// Performs `action` and prints its outcome.
    private mutating func report(_ action: EditAction) {
        screen.message = nil
        _ = perform(action)
        Console.print(screen.message ?? "done")
    }

    /// One line typed at the terminal; `hidden` turns the echo off while it is typed.
    static func readLine(_ prompt: String, hidden: Bool = false) -> String? {
        Console.write(Array(prompt.utf8))
        var saved = termios()
        let hide = hidden && tcgetattr(0, &saved) == 0
        if hide {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(0, TCSADRAIN, &quiet)
        }
        defer {
            if hide {
                _ = tcsetattr(0, TCSADRAIN, &saved)
                Console.print("")
            }
        }
        return Swift.readLine(strippingNewline: true)
    }
}

/// The frame last drawn, to draw only the lines that changed.
struct EditFrame {
    let color: Bool
    private var drawn: [String] = []

    init(color: Bool) { self.color = color }

    /// The next draw repaints every line (after a resize or a stop).
    mutating func invalidate() { drawn = [] }

    /// The terminal output that turns the last frame into `lines`: each changed line, addressed.
    mutating func draw(_ lines: [EditLine]) -> String {
        var out = drawn.isEmpty ? "\u{1B}[H\u{1B}[2J" : ""
        let rendered = lines.map(render)
        for (row, line) in rendered.enumerated() where row >= drawn.count || drawn[row] != line {
            out += "\u{1B}[\(row + 1);1H" + line + "\u{1B}[0m\u{1B}[K"
        }
        drawn = rendered
        return out
    }

    private func render(_ line: EditLine) -> String {
        guard color else { return line.text }
        switch line.style {
        case .normal: return line.text
        case .selected: return "\u{1B}[7m" + line.text
        case .dim: return "\u{1B}[2m" + line.text
        case .selectedDim: return "\u{1B}[2;7m" + line.text
        case .heading: return "\u{1B}[1m" + line.text
        }
    }
}
