import Dispatch
import Foundation
@testable import Settings
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// Holds the advisory lock of a settings file the way another process would (`flock` locks
/// belong to an open file description, so a second descriptor in this process conflicts too).
final class ForeignLock {
    let fd: Int32
    init(for settingsFile: URL) throws {
        let lockPath = settingsFile.deletingLastPathComponent().appending(path: "." + settingsFile.lastPathComponent + ".lock").path
        fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
    func release() { close(fd) }
}

/// Collects one store's diagnostics through its own handler.
final class StoreDiagnostics: Sendable {
    private let all = Mutex<[SettingsDiagnostic]>([])
    let stream: AsyncStream<SettingsDiagnostic>
    private let continuation: AsyncStream<SettingsDiagnostic>.Continuation

    init(_ store: SettingsStore) {
        (stream, continuation) = AsyncStream.makeStream(of: SettingsDiagnostic.self)
        store.diagnosticsHandler = { [self] d in
            all.locked { $0.append(d) }
            continuation.yield(d)
        }
    }

    var messages: [String] { all.locked { $0.map(\.message) } }
}

/// Waits for the first status update that satisfies `condition`.
func nextStatus(
    _ iterator: inout AsyncStream<SettingsStore.PersistenceStatus>.Iterator,
    where condition: (SettingsStore.PersistenceStatus) -> Bool
) async -> SettingsStore.PersistenceStatus? {
    while let status = await iterator.next() {
        if condition(status) { return status }
    }
    return nil
}

/// Runs the built `settings-fault` helper as a subprocess.
enum Fault {
    static var executable: URL { builtProduct("settings-fault") }

    static func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let run = try runProgram(executable, arguments)
        return (run.status, run.stderr)
    }

    /// Starts it with `arguments`; with `ignoring`, through a shell that makes those signals
    /// ignored first (`trap '' HUP`), as `nohup` or a script's background job do.
    static func start(_ arguments: [String], ignoring signals: [String] = []) throws -> RunningProgram {
        guard !signals.isEmpty else { return try RunningProgram(executable, arguments) }
        let script = "trap '' \(signals.joined(separator: " ")); SETTINGS_FAULT_KEEP_SIGNALS=1 exec \"$0\" \"$@\""
        return try RunningProgram(URL(filePath: "/bin/sh"), ["-c", script, executable.path] + arguments)
    }

    /// Starts it with `arguments`, reads the first `count` lines it prints, sends it `signal`,
    /// and finishes it, on a thread of its own (``offThePool(_:)``). Each wait lasts `limit` at
    /// most: fewer lines are returned, or the result says it hung.
    static func signalled(
        _ arguments: [String], with signal: Int32, after count: Int, within limit: Duration = .seconds(120)
    ) async throws -> (printed: [String], end: ProgramOutput) {
        try await offThePool { Result { () throws -> ([String], ProgramOutput) in
            let program = try start(arguments)
            let printed = program.lines(count, within: limit)
            program.signal(signal)
            return (printed, program.finish(within: limit))
        } }.get()
    }

    /// Runs it with `arguments` to its end, on a thread of its own (``offThePool(_:)``); one
    /// still running after `limit` is killed, and the result says it hung.
    static func finished(_ arguments: [String], within limit: Duration = .seconds(120)) async throws -> ProgramOutput {
        try await offThePool { Result { try runProgram(executable, arguments, within: limit) } }.get()
    }
}
