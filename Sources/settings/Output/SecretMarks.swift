import SettingsPlist
import SettingsFiles
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

/// Every mark that makes a key of a domain secret, as far as the tool can see: a secret-looking
/// name anywhere on its path (``PlistSecrets/isSecretName(_:)``), and `"x-secret": true` in the
/// schema the application wrote beside the file, on the key or a dictionary above it. `read`
/// and `explain` redact by these, for the key they print as well as the one typed.
struct SecretMarks {
    /// The application's schema, when it wrote one.
    var schema: PlistSchema?

    /// The marks for `domain`: the names, and its schema's when it can be read.
    static func of(_ domain: Domain) -> SecretMarks {
        guard let target = try? Files.target(of: domain.path).path else { return SecretMarks() }
        return SecretMarks(schema: ((try? SchemaFile.beside(target)) ?? nil)?.schema)
    }

    /// Whether the value at `path` is secret.
    func isSecret(_ path: [String]) -> Bool {
        if path.contains(where: PlistSecrets.isSecretName) { return true }
        guard let schema, !path.isEmpty else { return false }
        return (1...path.count).contains { schema.subschema(at: Array(path[..<$0]))?["x-secret"] == .bool(true) }
    }

    /// `value`, found at each of `paths` (a key and the names it had or has), as the tool prints
    /// it: all of it `<redacted>` when any of the paths is secret, else with every secret value
    /// inside redacted; as it is with `--show-secrets`.
    func shown(_ value: PlistValue, at paths: [[String]]) -> PlistValue {
        if showSecrets.load(ordering: .relaxed) { return value }
        if paths.contains(where: isSecret) { return .string(PlistSecrets.redactedText) }
        guard schema != nil else { return PlistSecrets.redacting(value) }
        return redacted(value, at: paths.first ?? [])
    }

    private func redacted(_ value: PlistValue, at path: [String]) -> PlistValue {
        switch value {
        case .dictionary(let entries):
            return .dictionary(PlistDictionary(zip(entries.keys, entries.values).map { key, child in
                let childPath = path + [key]
                return (key, isSecret(childPath) ? .string(PlistSecrets.redactedText) : redacted(child, at: childPath))
            }))
        case .array(let items):
            return .array(items.map { PlistSecrets.redacting($0) })
        default:
            return value
        }
    }
}
