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
}
