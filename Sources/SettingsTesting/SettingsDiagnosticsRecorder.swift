public import Settings
import Synchronization

/// Records one store's diagnostics, for a test that checks what the store reported.
///
/// Each store gets its own recorder (through ``SettingsStore/diagnosticsHandler``), so tests that
/// run in parallel never see each other's diagnostics, as they would through the process-wide
/// ``SettingsDiagnostics/handler``.
///
/// ```swift
/// let store = SettingsStore.inMemory(["volume": "loud"])
/// let recorder = SettingsDiagnosticsRecorder(recording: store)
/// let volume: Double = store.value("volume", default: 0.5)
/// #expect(recorder.diagnostics(of: .typeMismatch).count == 1)
/// ```
public final class SettingsDiagnosticsRecorder: Sendable, CustomStringConvertible {
    /// The diagnostics, in a box the store's handler keeps too.
    private final class Recorded: Sendable {
        let all = Mutex<[SettingsDiagnostic]>([])
    }
    private let recorded = Recorded()

    /// Starts recording `store`'s diagnostics (replacing its handler: they no longer reach
    /// standard error).
    ///
    /// - Parameter store: the store whose diagnostics are recorded.
    public init(recording store: SettingsStore) {
        store.diagnosticsHandler = { [recorded] diagnostic in recorded.all.withLock { $0.append(diagnostic) } }
    }

    /// Every diagnostic recorded so far, oldest first.
    public var diagnostics: [SettingsDiagnostic] {
        recorded.all.withLock { $0 }
    }

    /// The diagnostics of one kind, oldest first.
    ///
    /// - Parameter kind: the kind.
    /// - Returns: the diagnostics of that kind.
    public func diagnostics(of kind: SettingsDiagnostic.Kind) -> [SettingsDiagnostic] {
        recorded.all.withLock { $0.filter { $0.kind == kind } }
    }

    /// Forgets what was recorded so far.
    public func removeAll() {
        recorded.all.withLock { $0.removeAll() }
    }

    /// `SettingsDiagnosticsRecorder[2 diagnostics]`, then one line per diagnostic.
    public var description: String {
        let all = diagnostics
        return (["SettingsDiagnosticsRecorder[\(all.count) diagnostic\(all.count == 1 ? "" : "s")]"] + all.map { "\($0.kind): \($0.message)" })
            .joined(separator: "\n")
    }
}
