@testable import Settings
import Testing

/// `fn` throws a ``SettingsError``; returns it (or records an issue and returns `nil`).
func settingsError(_ fn: () throws(SettingsError) -> Void) -> SettingsError? {
    do {
        try fn()
        Issue.record("expected a SettingsError")
        return nil
    } catch {
        return error
    }
}

/// Calls `fn`, which should throw a ``SettingsError``, and returns the error's description.
func settingsErrorDescription<T>(_ fn: () throws(SettingsError) -> T) -> String? {
    do {
        _ = try fn()
        Issue.record("expected a SettingsError")
        return nil
    } catch {
        return error.description
    }
}
