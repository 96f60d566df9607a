import SettingsPlist
import SettingsFiles

/// What a sync integration (such as `SettingsPostgres`) needs from a store: every change to the
/// user layer, and a conditional batch write under the store's lock.
nonisolated extension SettingsStore {
    /// Calls `handler` with the leaf key paths of the user layer that changed, for every change
    /// from any source: this process's writes (origin `.write`), reloads of the file changed
    /// elsewhere and the other processes' keys adopted after a save (`.externalFile`),
    /// migrations, and batches applied with ``applyToUserLayer(_:origin:devices:onlyIf:)`` (their own
    /// origin, `.sync` by default). Unlike ``onChange(_:)`` it hears changes that are hidden by a
    /// higher layer (volatile values, overrides) and nothing about other layers.
    ///
    /// Keys are leaves (non-dictionary values) whose user-layer value was added, changed or
    /// removed; read the current value with `value(for:in: .user)`. The handler runs with no lock
    /// held, in the order the changes happened, and may read and write the store. Changes made
    /// before this returns are not reported (the file is read first).
    ///
    /// ```swift
    /// let tap = store.onUserLayerChange { change in
    ///     guard change.origin != .sync else { return }
    ///     for key in change.keys { outbox.insert(key) }
    /// }
    /// ```
    ///
    /// - Parameter handler: the changed leaves and their origin.
    /// - Returns: the observation: keep it to keep receiving changes.
    public func onUserLayerChange(_ handler: @escaping @Sendable (SettingsChange) -> Void) -> SettingsObservation {
        ensureLoaded()
        let id = values.observers.add(onUserLayer: handler)
        return SettingsObservation { [observers = values.observers] in observers.remove(id) }
    }

    /// Writes several user-layer values at once, under the store's lock, each only if `onlyIf`
    /// allows it given the value the user layer holds at that moment; the change is announced
    /// once with `origin` and saved like any write.
    ///
    /// A sync integration applies remote values with it, skipping keys that a local write changed
    /// since the integration last looked (so a racing local edit is never overwritten):
    ///
    /// ```swift
    /// let applied = store.applyToUserLayer(remote.map { ($0.key, $0.value) }) { key, current in
    ///     digest(current) == known[key]          // unchanged since we last synced it
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - writes: key paths and their new values (`nil` removes the user's value).
    ///   - origin: what the change is announced as (default `.sync`).
    ///   - devices: for synced values, the device each key's value came from: recorded in its
    ///     provenance ("from device 3F2A… via sync", ``SettingsStore/provenance(of:)``).
    ///   - onlyIf: called under the store's lock with each key and its current user-layer value;
    ///     it must not use the store. Return `false` to skip the key.
    /// - Returns: the keys written.
    @discardableResult
    public func applyToUserLayer(
        _ writes: [(key: SettingsKey, value: PlistValue?)],
        origin: SettingsChange.Origin = .sync,
        devices: [SettingsKey: String] = [:],
        onlyIf: (_ key: SettingsKey, _ current: PlistValue?) -> Bool = { _, _ in true }
    ) -> [SettingsKey] {
        var applied: [SettingsKey] = []
        var refused: [SettingsError] = []
        let sizeLimit = persistence?.maximumFileSize
        withoutActuallyEscaping(onlyIf) { onlyIf in
            replace(.user, origin: origin) { s in
                for (key, value) in writes where !key.components.isEmpty {
                    if let refusal = key.refusal(toStore: value, sizeLimit: sizeLimit) {
                        refused.append(refusal)
                        continue
                    }
                    let current = s[.user].value(at: key.components)
                    guard onlyIf(key, current), current != value else { continue }
                    _ = s.modify(.user) { $0.setValue(value, at: key.components[...]) }
                    s.markDirtyKeepingAlive(key, store: self)
                    applied.append(key)
                }
            }
        }
        for refusal in refused {
            report(SettingsDiagnostic(.writeRefused, key: refusal.key, "\(refusal); this key was not applied"))
        }
        if let provenance = SettingsProvenance.Origin(origin) {
            let byDevice = Dictionary(grouping: applied) { devices[$0] }
            for (device, keys) in byDevice { history?.note(keys, as: provenance, device: device) }
        }
        return applied
    }
}
