/// A change to the effective values of a ``SettingsStore``: the keys whose value, as reads see it,
/// is now different, and where the change came from.
///
/// Delivered by ``SettingsStore/changes`` and ``SettingsStore/onChange(_:)``. Only keys whose
/// effective value really changed are listed: writing the value a key already has, or changing a
/// layer that a higher layer hides, announces nothing.
///
/// ```swift
/// for await change in store.changes {
///     if change.origin == .externalFile { print("edited elsewhere:", change.keys) }
/// }
/// ```
public struct SettingsChange: Hashable, Sendable, CustomStringConvertible {
    /// Where a change came from.
    public enum Origin: String, Hashable, Sendable {
        /// This process wrote the user layer (`set`, a setting's setter, `reset()`, `removeValue`).
        case write
        /// Volatile values changed (``SettingsStore/setVolatile(_:for:)``, arguments, environment).
        case volatile
        /// An override file was loaded.
        case overrides
        /// Defaults were registered.
        case defaults
        /// The user's file was changed by another process or by hand, and reloaded.
        case externalFile
        /// An administrator changed the system defaults (`<dir>/<app>/settings.plist`).
        case systemDefaults
        /// An administrator changed the locks (`<dir>/<app>/locked.plist`): the keys whose
        /// value or writability changed (see ``SettingsStore/isWritable(_:)``).
        case locks
        /// Migrations rewrote stored values.
        case migration
        /// A sync integration applied values written on another device (see
        /// ``SettingsStore/applyToUserLayer(_:origin:devices:onlyIf:)``).
        case sync
        /// An external layer's values changed (a configuration provider's update: see
        /// ``SettingsStore/updateExternalLayer(named:lookup:)``).
        case provider
        /// Not a change itself: a ``SettingsStore/changes(bufferingNewest:)`` sequence whose
        /// consumer fell behind dropped its oldest changes; `keys` lists every key they named
        /// (re-read them).
        case overflow
    }

    /// The key paths whose effective value changed, in no particular order. A key path may name
    /// a namespace (`"Network"`) when a whole dictionary appeared or disappeared.
    public var keys: [SettingsKey]
    /// Where the change came from.
    public var origin: Origin

    /// Creates a change.
    ///
    /// - Parameters:
    ///   - keys: the key paths whose effective value changed.
    ///   - origin: where the change came from.
    public init(keys: [SettingsKey], origin: Origin) {
        self.keys = keys
        self.origin = origin
    }

    /// Whether the change concerns `key`: the key itself, a namespace above it, or a key below it.
    ///
    /// - Parameter key: the key path to test.
    public func affects(_ key: SettingsKey) -> Bool {
        keys.contains { $0.isRelated(to: key) }
    }

    /// `write: autoPlay, Network/timeout`.
    public var description: String {
        "\(origin.rawValue): " + keys.map(\.path).joined(separator: ", ")
    }
}

extension SettingsKey {
    /// Whether one key path is a prefix of the other (a change to either can change the other).
    func isRelated(to other: SettingsKey) -> Bool {
        let a = components, b = other.components
        let n = Swift.min(a.count, b.count)
        return a[..<n] == b[..<n]
    }
}
