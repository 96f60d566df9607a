import SettingsPlist
import Synchronization

// `--show-secrets`: values under secret-looking keys (password, token, apiKey…: see
// `PlistSecrets.isSecretName`) print as `<redacted>` in `read`, `print` and `diff` unless the
// flag is given. Kept apart from the commands so they change by one call each.

/// Whether `--show-secrets` was given.
let showSecrets = Atomic<Bool>(false)

/// `arguments` without `--show-secrets`, remembering whether it was there.
func takingShowSecrets(_ arguments: [String]) -> [String] {
    guard arguments.contains("--show-secrets") else { return arguments }
    showSecrets.store(true, ordering: .relaxed)
    return arguments.filter { $0 != "--show-secrets" }
}

/// `value` as the tool prints it: redacted unless `--show-secrets` was given.
func shown(_ value: PlistValue, under key: [String] = []) -> PlistValue {
    showSecrets.load(ordering: .relaxed)
        ? value : PlistSecrets.redacting(value, pathIsSecret: key.contains(where: PlistSecrets.isSecretName))
}

/// Two values as `diff` prints them: redacted unless `--show-secrets` was given (a secret that
/// differs still shows as changed).
func shown(_ a: PlistValue, _ b: PlistValue) -> (PlistValue, PlistValue) {
    showSecrets.load(ordering: .relaxed) ? (a, b) : PlistSecrets.redacting(a, b)
}
