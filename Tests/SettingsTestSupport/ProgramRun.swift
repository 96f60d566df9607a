public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a program run by ``runProgram(_:_:environment:in:)`` printed, and how it ended.
public struct ProgramOutput: Sendable {
    /// Its exit status (or, when a signal ended it, the signal's number).
    public var status: Int32
    /// Its standard output.
    public var stdout: String
    /// Its standard error.
    public var stderr: String
    /// Both outputs, standard output first.
    public var output: String { stdout + stderr }
}

/// Runs `program` with `arguments`, the test's environment plus `environment`, in `directory`
/// (the current one when `nil`), and waits for it: the one way the test targets start a program
/// and collect what it prints (``RunningProgram`` for one a test talks to while it runs). It
/// blocks the calling thread: from an async test, call it through a helper that runs it off
/// Swift's cooperative pool.
public func runProgram(
    _ program: URL, _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil
) throws -> ProgramOutput {
    try RunningProgram(program, arguments, environment: environment, in: directory).finish()
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
/// writes to its standard input, sends it signals, then ``finish()``es it. Everything
/// ``runProgram(_:_:environment:in:)`` does goes through it, so there is one launcher.
///
/// Its standard error goes to a file, never a pipe, so a program that prints much there can
/// never block while the test waits on its standard output. One that is still running when the
/// value goes away is terminated (and waited for).
///
/// ```swift
/// let editor = try RunningProgram(builtProduct("settings-fault"), ["model-edit", path, "name", "Ada"], input: true)
/// #expect(editor.line() == "loaded")
/// editor.write("go\n")
/// #expect(editor.finish().status == 0)
/// ```
///
/// Not `Sendable`: one test uses it from one task.
public final class RunningProgram {
    private let process = Process()
    private let output = Pipe()
    private let input: Pipe?
    private let errors: URL
    private var pending: [UInt8] = []
    private var outputEnded = false

    /// Starts `program`.
    ///
    /// - Parameters:
    ///   - program: the executable.
    ///   - arguments: its arguments.
    ///   - environment: added to (and overriding) the test's own environment.
    ///   - directory: its working directory; the test's when `nil`.
    ///   - input: whether the test writes its standard input (``write(_:)``); otherwise it
    ///     shares the test's.
    public init(
        _ program: URL, _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil,
        input: Bool = false
    ) throws {
        errors = FileManager.default.temporaryDirectory.appending(path: "program-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errors.path])
        }
        let errorFile = try FileHandle(forWritingTo: errors)
        defer { try? errorFile.close() }
        self.input = input ? Pipe() : nil
        if let directory { process.currentDirectoryURL = directory }
        process.executableURL = program
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = errorFile
        if let pipe = self.input { process.standardInput = pipe }
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: errors)
            throw error
        }
    }

    /// Its process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// The next line it prints on standard output, without its newline; `nil` once its output
    /// ended. Blocks until the line is complete: bound the test with a time limit.
    public func line() -> String? {
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
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { outputEnded = true } else { pending += chunk }
        }
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
    /// returns its status and outputs (standard output without the lines ``line()`` took).
    public func finish() -> ProgramOutput {
        try? input?.fileHandleForWriting.close()
        var rest = pending
        pending.removeAll()
        if !outputEnded {
            rest += output.fileHandleForReading.readDataToEndOfFile()
            outputEnded = true
        }
        process.waitUntilExit()
        let stderr = (try? Data(contentsOf: errors)) ?? Data()
        return ProgramOutput(status: process.terminationStatus,
                             stdout: String(decoding: rest, as: UTF8.self),
                             stderr: String(decoding: stderr, as: UTF8.self))
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: errors)
    }
}
