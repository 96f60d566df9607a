import SettingsPlist

/// The address of a setting: a path of dictionary keys separated by `/`.
///
/// `"Network/Proxy/host"` addresses `host` inside the `Proxy` dictionary inside `Network`, as in
/// TFOptionsKit's namespaces. A key that itself contains `/` is written with a backslash,
/// `"Paths/a\/b"`, or built from components:
///
/// ```swift
/// let timeout: SettingsKey = "Network/timeout"
/// timeout.components              // ["Network", "timeout"]
/// let literal = SettingsKey(components: ["Paths", "a/b"])
/// literal.path                    // "Paths/a\/b"
/// ```
public struct SettingsKey: Hashable, Sendable {
    /// The dictionary keys from the root down; never empty.
    public let components: [String]
    /// The canonical escaped path text (`/` between components, `\/` and `\\` inside them).
    /// Two keys are equal exactly when their paths are.
    public let path: String
    /// `path`'s hash, computed once: keys are hashed on every tracked write.
    private let pathHash: Int
    /// The hash of the first component as it is written in `path` (escaped), computed once:
    /// keys that are equal, or one inside the other, have the same one (see ``TrackedKeys``).
    let rootHash: Int
    /// Whether the key was marked secret with ``secret(_:)``; not part of equality.
    private var isMarkedSecret = false

    /// Creates a key from its path text: `/` separates components, `\/` is a literal slash and
    /// `\\` a literal backslash. Empty components are kept (a key may be the empty string).
    ///
    /// - Parameter path: the key, e.g. `"Network/timeout"`.
    public init(_ path: String) {
        self.init(components: EscapedPath.split(path, separator: "/"))
    }

    /// Creates a key from literal components; none of them is split at `/`.
    ///
    /// - Parameter components: the dictionary keys from the root down (at least one).
    public init(components: [String]) {
        let parts = components.isEmpty ? [""] : components
        self.components = parts
        let escaped = parts.map(Self.escape)
        self.path = escaped.joined(separator: "/")
        self.pathHash = path.hashValue
        self.rootHash = escaped.count == 1 ? pathHash : escaped[0].hashValue
    }

    /// A key whose values are secret (tokens, passwords): they are left out of descriptions,
    /// diagnostics and error messages.
    ///
    /// ```swift
    /// @Setting(.secret("Sync/credentials"), default: "") var credentials: String
    /// ```
    ///
    /// Keys with a component named like a secret (`password`, `apiToken`, `client_secret`: see
    /// ``SettingsSecrets/isSecretName(_:)``) are secret without being marked. A marked key equals
    /// the same key unmarked.
    ///
    /// - Parameter path: the key path, as for ``init(_:)``.
    public static func secret(_ path: String) -> SettingsKey {
        var key = SettingsKey(path)
        key.isMarkedSecret = true
        return key
    }

    /// Whether values under this key are secret: marked with ``secret(_:)``, or a component is
    /// named like a secret (``SettingsSecrets/isSecretName(_:)``).
    public var isSecret: Bool {
        isMarkedSecret || components.contains(where: SettingsSecrets.isSecretName)
    }

    /// Whether the key is a single top-level component.
    public var isTopLevel: Bool { components.count == 1 }

    /// The key of the dictionary that holds this one, or `nil` for a top-level key.
    public var parent: SettingsKey? {
        components.count > 1 ? SettingsKey(components: Array(components.dropLast())) : nil
    }

    /// The key `component` inside this one.
    public func appending(_ component: String) -> SettingsKey {
        SettingsKey(components: components + [component])
    }

    /// A component written so that ``init(_:)`` reads it back as one component.
    public static func escape(_ component: String) -> String {
        EscapedPath.escape(component, separator: "/")
    }

    // The path is canonical (built from the components), so it alone decides equality: one
    // string to hash instead of an array of them.
    public static func == (lhs: SettingsKey, rhs: SettingsKey) -> Bool { lhs.pathHash == rhs.pathHash && lhs.path == rhs.path }
    public func hash(into hasher: inout Hasher) { hasher.combine(pathHash) }
}

extension SettingsKey: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    /// Creates a key from a literal path, `"Network/timeout"`, or an interpolated one:
    ///
    /// ```swift
    /// for i in 0..<3 { store["\(prefix)/item\(i)"] = .integer(PlistInteger(i)) }
    /// ```
    ///
    /// - Parameter value: the key path, as for ``init(_:)``.
    public init(stringLiteral value: String) { self.init(value) }
}

extension SettingsKey: CustomStringConvertible {
    /// The path text, `Network/timeout`.
    public var description: String { path }
}
