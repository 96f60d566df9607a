

/// Where an external layer sits among a store's built-in layers
/// (``SettingsStore/addExternalLayer(named:placement:lookup:)``).
///
/// ```swift
/// store.addExternalLayer(named: "environment", placement: .above(.user)) { key, _ in env[key] }
/// ```
public enum SettingsLayerPlacement: Hashable, Sendable {
    /// Directly above a built-in layer: `.above(.user)` hides the user's file.
    case above(SettingsLayer)
    /// Directly below a built-in layer: `.below(.user)` is hidden by the user's file and hides the
    /// registered defaults.
    case below(SettingsLayer)
}
