public import Foundation
import SettingsTestSandbox
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a program run by ``runProgram(_:_:environment:in:within:)`` printed, and how it ended.
public struct ProgramOutput: Sendable {
    /// Its process id.
    public var processIdentifier: Int32
    /// Its exit status (or, when a signal ended it, the signal's number).
    public var status: Int32
    /// Whether a signal ended it (``status`` is then the signal's number), not `exit`.
    public var endedBySignal: Bool
    /// Whether it was still running when ``RunningProgram/finish(within:)``'s limit passed, and
    /// was killed then (`SIGKILL`): a hang to report. The other fields are then those of the kill.
    public var hung: Bool
    /// Its standard output.
    public var stdout: String
    /// Its standard error.
    public var stderr: String
    /// Both outputs, standard output first.
    public var output: String { stdout + stderr }
    /// Its standard output as lines, without their newlines.
    public var lines: [String] {
        var lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

/// Runs `program` with `arguments`, the test's environment plus `environment`, in `directory`
/// (the current one when `nil`), and waits for it, `limit` at most (then kills it: see
/// ``ProgramOutput/hung``): the one way the test targets start a program and collect what it
/// prints (``RunningProgram`` for one a test talks to while it runs). It blocks the calling
/// thread: from an async test, call it through ``offThePool(_:)``.
public func runProgram(
    _ program: URL, _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil,
    within limit: Duration = RunningProgram.patience
) throws -> ProgramOutput {
    try RunningProgram(program, arguments, environment: environment, in: directory).finish(within: limit)
}

/// Runs blocking `body` on a thread of its own and waits for it without blocking the caller's:
/// the waiting never holds one of the few threads of Swift's cooperative pool that the other
/// tests run on. A ``RunningProgram`` a test drives from an async test lives inside `body`
/// (it is not `Sendable`): `body` starts it, talks to it, finishes it, and returns what the test
/// asserts.
///
/// ```swift
/// let run = try await offThePool { Result { try runProgram(tool, ["--version"]) } }.get()
/// ```
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// The product `name` SwiftPM built beside the test bundle (it builds every product for
/// `swift test`): `settings`, `settings-fault`, `SettingsExample`.
public func builtProduct(_ name: String) -> URL {
    var directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
    // On Apple platforms the test runner sits inside the .xctest bundle.
    while directory.path.contains(".xctest") { directory = directory.deletingLastPathComponent() }
    return directory.appending(path: name)
}

/// A program a test started and talks to while it runs: reads what it prints line by line,
/// writes to its standard input, sends it signals, then ``finish(within:)``es it. Everything
/// ``runProgram(_:_:environment:in:within:)`` does goes through it, so there is one launcher.
///
/// Every wait on the program is bounded: ``line(within:)``, ``lines(_:within:)`` and
/// ``finish(within:)`` give up at their limit (``patience`` unless given), and `finish` then
/// kills the program and reports the hang. Its standard error goes to a file, never a pipe, so
/// a program that prints much there can never block while the test waits on its standard output
/// (with `outputFile`, both outputs go to the test's file). One that is still running when the
/// value goes away is killed (`SIGKILL`) and waited for.
///
/// ```swift
/// let editor = try RunningProgram(builtProduct("settings-fault"), ["model-edit", path, "name", "Ada"], input: true)
/// #expect(editor.line() == "loaded")
/// editor.write("go\n")
/// #expect(editor.finish().status == 0)
/// ```
///
/// Not `Sendable`: one test uses it from one task (from an async test, inside ``offThePool(_:)``).
public final class RunningProgram {
    /// How long a wait on a program lasts when the test gives no limit: far above any honest
    /// wait on a busy machine, as ``hangLimit`` is for a whole test.
    public static let patience: Duration = .seconds(600)

    /// Held while a program is being started, from its first pipe to its start: one start at a
    /// time. Foundation's `Process` on Linux closes, in the child, every descriptor up to the
    /// highest it saw open when it looked; a pipe or the socket that tells Foundation a program
    /// ended, made by another start after that look, went to this child too. That program's
    /// end was then noticed only once this child ended as well, and its output ended no sooner.
    private static let starting = NSLock()

    private let process = Process()
    /// Its standard output; `nil` when it goes to the test's file.
    private let output: Pipe?
    private let input: Pipe?
    /// The temporary file of its standard error; `nil` when it goes to the test's file.
    private let errors: URL?
    /// Signalled once when the process ended.
    private let exited = DispatchSemaphore(value: 0)
    private var pending: [UInt8] = []
    private var outputEnded: Bool

    /// Starts `program`.
    ///
    /// - Parameters:
    ///   - program: the executable.
    ///   - arguments: its arguments.
    ///   - environment: added to (and overriding) the test's own environment.
    ///   - directory: its working directory; when `nil`, the one the test process started in.
    ///   - input: whether the test writes its standard input (``write(_:)``); otherwise it
    ///     shares the test's.
    ///   - outputFile: when given, its standard output and standard error both go to this file
    ///     (created, or emptied), for a test that reads the file while the program runs (a log
    ///     it waits for lines in). ``line(within:)`` then returns `nil` at once, and
    ///     ``finish(within:)``'s outputs are empty.
    public init(
        _ program: URL, _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil,
        input: Bool = false, outputFile: URL? = nil
    ) throws {
        Self.starting.lock()
        defer { Self.starting.unlock() }
        let errorPath = outputFile ?? FileManager.default.temporaryDirectory.appending(path: "program-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errorPath.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errorPath.path])
        }
        let errorFile = try FileHandle(forWritingTo: errorPath)
        defer { try? errorFile.close() }
        errors = outputFile == nil ? errorPath : nil
        self.input = input ? Pipe() : nil
        output = outputFile == nil ? Pipe() : nil
        outputEnded = output == nil
        // Foundation's `Process` takes the working directory when it is made, and changes to it
        // when the program starts: without a directory of the test's, the one the test process
        // started in, never one a guide's run entered for a moment and removed since.
        let started = String(cString: settings_test_start_directory())
        if let directory {
            process.currentDirectoryURL = directory
        } else if !started.isEmpty {
            process.currentDirectoryURL = URL(filePath: started, directoryHint: .isDirectory)
        }
        process.executableURL = program
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = output ?? errorFile
        process.standardError = errorFile
        if let pipe = self.input { process.standardInput = pipe }
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            if let errors { try? FileManager.default.removeItem(at: errors) }
            throw error
        }
    }

    /// Its process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }

    /// The next line it prints on standard output, without its newline; `nil` once its output
    /// ended, or when `limit` passed first.
    public func line(within limit: Duration = patience) -> String? {
        line(before: .now + limit)
    }

    /// The next `count` lines it prints on standard output, without their newlines, waiting
    /// `limit` at most for all of them: fewer when its output ended or the limit passed first.
    public func lines(_ count: Int, within limit: Duration = patience) -> [String] {
        let deadline = ContinuousClock.now + limit
        var lines: [String] = []
        while lines.count < count, let line = line(before: deadline) { lines.append(line) }
        return lines
    }

    /// Writes `text` to its standard input (started with `input: true`).
    public func write(_ text: String) {
        input?.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Sends it `signal` (`SIGTERM`, `SIGINT`...).
    public func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Closes its standard input, reads the rest of what it prints, waits for it to end, and
    /// returns its status and outputs (standard output without the lines ``line(within:)``
    /// took). One still running when `limit` passed is killed (`SIGKILL`), and the result says
    /// it ``ProgramOutput/hung``.
    public func finish(within limit: Duration = patience) -> ProgramOutput {
        let deadline = ContinuousClock.now + limit
        try? input?.fileHandleForWriting.close()
        while fill(before: deadline) {}
        // Its output ended (or another process that inherited it keeps it open): the process
        // itself ends, or is killed, by the deadline.
        var hung = false
        if process.isRunning, exited.wait(timeout: .now() + .nanoseconds(nanoseconds(until: deadline))) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            hung = true
        }
        process.waitUntilExit()
        while fill(before: .now) {}  // what it printed before it was killed
        let rest = pending
        pending.removeAll()
        let stderr = errors.flatMap { try? Data(contentsOf: $0) } ?? Data()
        return ProgramOutput(processIdentifier: process.processIdentifier,
                             status: process.terminationStatus,
                             endedBySignal: process.terminationReason == .uncaughtSignal,
                             hung: hung,
                             stdout: String(decoding: rest, as: UTF8.self),
                             stderr: String(decoding: stderr, as: UTF8.self))
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if let errors { try? FileManager.default.removeItem(at: errors) }
    }

    /// The next line of its standard output, waiting until `deadline` at most.
    private func line(before deadline: ContinuousClock.Instant) -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return text
            }
            if outputEnded {
                guard !pending.isEmpty else { return nil }
                defer { pending.removeAll() }
                return String(decoding: pending, as: UTF8.self)
            }
            if !fill(before: deadline), !outputEnded { return nil }  // the deadline passed
        }
    }

    /// Reads what its standard output has into `pending`, waiting for it until `deadline` at
    /// most (`poll(2)`: a wait that cannot outlast its bound). `false` when nothing came by
    /// then, or its output ended before.
    private func fill(before deadline: ContinuousClock.Instant) -> Bool {
        guard !outputEnded, let descriptor = output?.fileHandleForReading.fileDescriptor else { return false }
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let milliseconds = Int32(clamping: (nanoseconds(until: deadline) + 999_999) / 1_000_000)
            let count = poll(&ready, 1, milliseconds)
            if count < 0, errno == EINTR { continue }
            if count == 0 { return false }  // the deadline passed
            guard count > 0 else {
                outputEnded = true
                return false
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let got = read(descriptor, &buffer, buffer.count)
            if got < 0, errno == EINTR || errno == EAGAIN { continue }
            guard got > 0 else {  // the end of its output (or an error that ends it)
                outputEnded = true
                return false
            }
            pending += buffer[..<got]
            return true
        }
    }

    /// The nanoseconds from now to `deadline`, 0 when it passed.
    private func nanoseconds(until deadline: ContinuousClock.Instant) -> Int {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int(min(seconds, 1 << 32)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)  // 136 years at most
    }
}
