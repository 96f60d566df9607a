import Settings
import Synchronization

/// Collects every diagnostic for the whole test run, so parallel tests can each look at the
/// ones for their own (unique) keys without replacing the global handler under each other.
enum DiagnosticsRecorder {
    private static let all = Mutex<[SettingsDiagnostic]>([])
    private static let installed: Void = {
        SettingsDiagnostics.handler = { d in all.withLock { $0.append(d) } }
    }()

    /// Starts recording (idempotent).
    static func start() { _ = installed }

    /// The diagnostics recorded so far whose key is `key`.
    static func diagnostics(for key: SettingsKey) -> [SettingsDiagnostic] {
        all.withLock { $0.filter { $0.key == key } }
    }

    /// The diagnostics recorded so far whose message contains `text`.
    static func diagnostics(containing text: String) -> [SettingsDiagnostic] {
        all.withLock { $0.filter { $0.message.contains(text) } }
    }
}
