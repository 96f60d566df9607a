#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import SettingsFiles

/// The controlling terminal of a full-screen command (`settings edit`): raw keys, the alternate
/// screen, its size, and putting everything back on every way out: a normal return, `exit`,
/// SIGINT, SIGTERM, SIGHUP, SIGQUIT, a stop (SIGTSTP, undone again on SIGCONT) and a crash
/// (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE), after which the signal does what it
/// would have done.
///
/// Signal handlers touch only async-signal-safe calls (`write`, `tcsetattr`, `signal`,
/// `raise`) and lock-free atomics.
enum Terminal {
    /// Standard input and output are both terminals.
    static var isInteractive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    /// Whether `TERM` names a terminal that cannot address the screen (`dumb`, or no `TERM`).
    static func isDumb(environment term: String?) -> Bool {
        guard let term, !term.isEmpty else { return true }
        return term == "dumb"
    }

    /// The size in cells, from the terminal (24×80 when it does not say).
    static func size() -> (rows: Int, columns: Int) {
        var w = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &w) == 0, w.ws_row > 0, w.ws_col > 0 else { return (24, 80) }
        return (Int(w.ws_row), Int(w.ws_col))
    }

    /// The terminal was resized (SIGWINCH) since the flag was last cleared.
    static let resized = Atomic<Bool>(false)
    /// The program was continued after a stop (SIGCONT): the screen must be drawn again whole.
    static let continued = Atomic<Bool>(false)
    /// Whether SIGTSTP is caught (it was not inherited as ignored).
    private static let catchesStop = Atomic<Bool>(false)
    /// Whether the terminal is in raw mode on the alternate screen now.
    private static let isRaw = Atomic<Bool>(false)

    /// The terminal's settings before ``enter()``. Written once, in ``enter()``, before
    /// ``isRaw`` is set and before any handler that reads it is installed; never written again;
    /// read only by ``restore()`` (from handlers and `atexit`), after it has seen ``isRaw``.
    /// That ordering (a sequentially consistent atomic between the write and every read) is
    /// why this unsynchronised static is safe.
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var raw = termios()

    private static let enterSequence: [UInt8] = Array("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J".utf8)
    private static let leaveSequence: [UInt8] = Array("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l".utf8)

    /// The signals after which the terminal is put back and the signal then does its default.
    private static let endingSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]

    /// The signals a process may inherit as ignored (`nohup`), which then stay ignored.
    private static let ignorable: Set<Int32> = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Raw keys (no echo, no line editing; Ctrl-C and Ctrl-Z still signal), the alternate
    /// screen, the cursor hidden; handlers and `atexit` that undo it.
    ///
    /// - Returns: `false` when the terminal's settings cannot be read or changed.
    static func enter() -> Bool {
        guard tcgetattr(0, &saved) == 0 else { return false }
        raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(0, TCSADRAIN, &raw) == 0 else { return false }
        isRaw.store(true, ordering: .sequentiallyConsistent)
        atexit { Terminal.restore() }
        // A signal inherited as ignored stays ignored (the crash signals are always caught).
        for number in endingSignals where !(ignorable.contains(number) && SignalDisposition.isIgnored(number)) {
            _ = signal(number) { number in
                Terminal.restore()
                _ = signal(number, SIG_DFL)
                _ = raise(number)
            }
        }
        if !SignalDisposition.isIgnored(SIGTSTP) {
            catchesStop.store(true, ordering: .sequentiallyConsistent)
            _ = signal(SIGTSTP, stopHandler)
        }
        _ = signal(SIGCONT) { _ in
            Terminal.reenter()
            if Terminal.catchesStop.load(ordering: .sequentiallyConsistent) { _ = signal(SIGTSTP, Terminal.stopHandler) }
            Terminal.continued.store(true, ordering: .sequentiallyConsistent)
        }
        _ = signal(SIGWINCH) { _ in Terminal.resized.store(true, ordering: .sequentiallyConsistent) }
        enterSequence.withUnsafeBufferPointer { _ = Glibc.write(1, $0.baseAddress, $0.count) }
        return true
    }

    /// SIGTSTP: the terminal back as it was, then the stop itself.
    private static let stopHandler: @convention(c) (Int32) -> Void = { _ in
        Terminal.restore()
        _ = signal(SIGTSTP, SIG_DFL)
        _ = raise(SIGTSTP)
    }

    /// Back to raw mode and the alternate screen after a stop.
    private static func reenter() {
        guard !isRaw.load(ordering: .sequentiallyConsistent) else { return }
        _ = tcsetattr(0, TCSADRAIN, &raw)
        isRaw.store(true, ordering: .sequentiallyConsistent)
        enterSequence.withUnsafeBufferPointer { _ = Glibc.write(1, $0.baseAddress, $0.count) }
    }

    /// Puts the terminal back as it was before ``enter()``; does nothing the second time.
    /// Async-signal-safe.
    static func restore() {
        guard isRaw.exchange(false, ordering: .sequentiallyConsistent) else { return }
        leaveSequence.withUnsafeBufferPointer { _ = Glibc.write(1, $0.baseAddress, $0.count) }
        _ = tcsetattr(0, TCSADRAIN, &saved)
    }

    /// Writes `text` to the terminal whole.
    static func show(_ text: String) {
        Console.write(Array(text.utf8))
    }

    /// The keys typed within `milliseconds` (none when the time passes first, or a signal
    /// interrupts the wait). A lone Esc is told from the start of a sequence by waiting at most
    /// 30 ms for the rest.
    static func keys(waitingAtMost milliseconds: Int32) -> [Key] {
        guard var bytes = readAvailable(waitingAtMost: milliseconds) else { return [] }
        if bytes.last == 0x1B, let more = readAvailable(waitingAtMost: 30) { bytes += more }
        return Key.decode(bytes)
    }

    /// What standard input has within `milliseconds`, or `nil`. A terminal that went away
    /// (hang-up, an error, end of input) reads as Ctrl-D, which quits.
    private static func readAvailable(waitingAtMost milliseconds: Int32) -> [UInt8]? {
        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(0, &buffer, buffer.count)
        if count > 0 { return Array(buffer[..<count]) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return nil }
        return [0x04]
    }
}
