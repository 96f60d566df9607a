public import SettingsPlist

/// A store's values at one instant: every layer as it was when ``SettingsStore/snapshot()`` was
/// called, read as the store reads them.
///
/// Taking one costs O(1) whatever the store holds: the layers' dictionaries are copy-on-write
/// values, kept as they are (the store's next write to a layer then copies that layer's top-level
/// dictionary once). Each read costs what a read of the store costs, with no lock. Reads of
/// several keys agree with each other, however the store changes meanwhile:
///
/// ```swift
/// let snapshot = store.snapshot()
/// let host = snapshot.value(for: "db/host")     // both from the same instant
/// let port = snapshot.value(for: "db/port")
/// ```
///
/// An external layer (``SettingsStore/addExternalLayer(named:placement:lookup:)``) is read
/// through the lookup it had at that instant. Two snapshots are equal when every layer is.
public struct SettingsSnapshot: Hashable, Sendable {
    /// The store's layers, as they were.
    let layers: SettingsLayers

    /// The effective value for `key` at the snapshot's instant (see ``SettingsStore/value(for:)``).
    ///
    /// - Parameter key: the key path.
    public func value(for key: SettingsKey) -> PlistValue? {
        layers.resolve(key)?.value
    }

    /// The layer the effective value for `key` came from (see ``SettingsStore/source(of:)``).
    ///
    /// - Parameter key: the key path.
    public func source(of key: SettingsKey) -> SettingsLayer? {
        layers.resolve(key)?.layer
    }

    /// Every layer merged, as ``SettingsStore/effectiveValues`` was at the snapshot's instant
    /// (O(values): for listings, not for reads).
    public var effectiveValues: PlistDictionary {
        layers.effectiveValues
    }
}

nonisolated extension SettingsStore {
    /// The store's values at this instant, in O(1) (see ``SettingsSnapshot``).
    ///
    /// ```swift
    /// let snapshot = store.snapshot()
    /// store["volume"] = 0.9
    /// snapshot.value(for: "volume")   // the value before the write
    /// ```
    public func snapshot() -> SettingsSnapshot {
        withState { SettingsSnapshot(layers: $0.layers) }
    }
}
