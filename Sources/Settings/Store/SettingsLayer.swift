/// The layers a ``SettingsStore`` reads through, highest first.
///
/// A read returns the value from the highest layer that has the key; ``SettingsStore/source(of:)``
/// says which. Only ``user`` is ever written by `set`, and only it is persisted. Besides the six
/// built-in layers, a store can read through read-only layers whose values come from elsewhere (a
/// configuration provider, say: see ``SettingsStore/addExternalLayer(named:placement:lookup:)``);
/// their values come from ``provider(_:)``.
///
/// ```swift
/// store.register(defaults: ["timeout": 30])      // .defaults
/// store["timeout"] = 60                           // .user
/// store.setVolatile(5, for: "timeout")            // .volatile: this process only
/// store.source(of: "timeout")                     // .volatile
/// ```
public enum SettingsLayer: Hashable, Sendable, CaseIterable, Comparable {
    /// Values an administrator locked (`<dir>/<app>/locked.plist` in a system directory): above
    /// every other layer, and never writable (see ``SettingsStore/isWritable(_:)``).
    case locked
    /// Process-only values: the API, command-line `-key value` arguments, environment variables.
    case volatile
    /// Override files (TFOptionsKit's target-specific options), merged deeply; read-only.
    case overrides
    /// The user's persistent file: the only layer `set` writes.
    case user
    /// System-wide defaults an administrator or vendor installed
    /// (`<dir>/<app>/settings.plist` in each `$XDG_CONFIG_DIRS` directory): the user's file
    /// overrides them; read-only.
    case system
    /// Registered defaults: from code, a defaults plist, or a `Settings.bundle` `Root.plist`.
    case defaults
    /// A read-only external layer, by the name it was added with
    /// (``SettingsStore/addExternalLayer(named:placement:lookup:)``), such as
    /// `.provider("EnvironmentVariablesProvider")`.
    case provider(String)

    /// The six built-in layers, highest first (external layers belong to a store, not to the type).
    public static let allCases: [SettingsLayer] = [.locked, .volatile, .overrides, .user, .system, .defaults]

    /// Whether this is ``user``: a pattern match, where `== .user` copies and compares
    /// (the layer can carry a name), on every write.
    var isUser: Bool {
        if case .user = self { true } else { false }
    }

    /// The position of a built-in layer in ``allCases``; `nil` for an external layer.
    var builtInIndex: Int? {
        switch self {
        case .locked: 0
        case .volatile: 1
        case .overrides: 2
        case .user: 3
        case .system: 4
        case .defaults: 5
        case .provider: nil
        }
    }

    /// Built-in layers compare by height, higher ones smaller: `.volatile < .defaults`. An external
    /// layer's height depends on the store it was added to, so external layers sort after the
    /// built-in ones, by name.
    public static func < (lhs: SettingsLayer, rhs: SettingsLayer) -> Bool {
        switch (lhs, rhs) {
        case (.provider(let a), .provider(let b)): a < b
        case (.provider, _): false
        case (_, .provider): true
        default: (lhs.builtInIndex ?? 0) < (rhs.builtInIndex ?? 0)  // both built in: both have an index
        }
    }

    /// The name used in diagnostics: `locked`, `volatile`, `override file`, `user file`,
    /// `system defaults`, `registered defaults`, or an external layer's own name.
    public var name: String {
        switch self {
        case .locked: "locked"
        case .volatile: "volatile"
        case .overrides: "override file"
        case .user: "user file"
        case .system: "system defaults"
        case .defaults: "registered defaults"
        case .provider(let name): name
        }
    }
}

