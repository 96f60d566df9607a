/// The layers a ``SettingsStore`` reads through, highest first.
///
/// A read returns the value from the highest layer that has the key; ``SettingsStore/source(of:)``
/// says which. Only ``user`` is ever written by `set`, and only it is persisted.
///
/// ```swift
/// store.register(defaults: ["timeout": 30])      // .defaults
/// store["timeout"] = 60                           // .user
/// store.setVolatile(5, for: "timeout")            // .volatile: this process only
/// store.source(of: "timeout")                     // .volatile
/// ```
public enum SettingsLayer: Int, Hashable, Sendable, CaseIterable, Comparable {
    /// Process-only values: the API, command-line `-key value` arguments, environment variables.
    case volatile
    /// Override files (TFOptionsKit's target-specific options), merged deeply; read-only.
    case overrides
    /// The user's persistent file: the only layer `set` writes.
    case user
    /// Registered defaults: from code, a defaults plist, or a `Settings.bundle` `Root.plist`.
    case defaults

    /// Higher layers compare smaller: `.volatile < .defaults`.
    public static func < (lhs: SettingsLayer, rhs: SettingsLayer) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name used in diagnostics: `volatile`, `override file`, `user file`, `registered defaults`.
    public var name: String {
        switch self {
        case .volatile: "volatile"
        case .overrides: "override file"
        case .user: "user file"
        case .defaults: "registered defaults"
        }
    }
}
