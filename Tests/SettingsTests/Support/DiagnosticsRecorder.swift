@testable import Settings  // Mutex.locked: visible to ThreadSanitizer in SETTINGS_TSAN builds
import Synchronization

/// Collects every diagnostic for the whole test run, so parallel tests can each look at the
/// ones for their own (unique) keys without replacing the global handler under each other.
enum DiagnosticsRecorder {
    private static let all = Mutex<[SettingsDiagnostic]>([])
    private static let installed: Void = {
        SettingsDiagnostics.handler = { d in all.locked { $0.append(d) } }
    }()

    /// Starts recording (idempotent).
    static func start() { _ = installed }

    /// The diagnostics recorded so far whose key is `key`.
    static func diagnostics(for key: SettingsKey) -> [SettingsDiagnostic] {
        all.locked { $0.filter { $0.key == key } }
    }

    /// The diagnostics recorded so far whose message contains `text`.
    static func diagnostics(containing text: String) -> [SettingsDiagnostic] {
        all.locked { $0.filter { $0.message.contains(text) } }
    }
}
