import SettingsPlist

extension SettingsStore.State {
    /// Writes (or with `nil` removes) one key of one layer.
    ///
    /// - Parameters:
    ///   - value: the new value, or `nil`.
    ///   - key: the key path.
    ///   - layer: the layer written.
    ///   - comparing: whether to work out which effective values changed (only when someone
    ///     observes: it costs look-ups in the other layers).
    /// - Returns: `nil` when the layer already held `value`; otherwise the key paths whose
    ///   effective value changed (empty when not `comparing`).
    mutating func write(_ value: PlistValue?, at key: SettingsKey, in layer: SettingsLayer, comparing: Bool) -> [SettingsKey]? {
        let higherLayersEmpty = SettingsLayer.allCases.allSatisfy { $0 >= layer || layers[$0.rawValue].isEmpty }
        // The common case: a scalar written with nothing above it. Its effective value is the
        // value itself, so only an absent old value needs a look at the layers below.
        if !comparing || (higherLayersEmpty && value.map(\.isScalar) == true) {
            let old = modify(layer) { dict in
                key.isTopLevel
                    ? dict.replaceValue(value, forKey: key.components[0])
                    : dict.setValue(value, at: key.components[...])
            }
            guard old != value else { return nil }
            guard comparing else { return [] }
            if old == nil, let below = SettingsLayer(rawValue: layer.rawValue + 1),
               resolve(key, from: below)?.value == value {
                return []
            }
            return [key]
        }
        // Removals, dictionaries, or values hidden by a higher layer: compare the effective
        // values of every key path that changed in this layer, before and after.
        let old = self[layer].value(at: key.components)
        guard old != value else { return nil }
        var candidates: [SettingsKey] = []
        if case .dictionary(let oldDict)? = old, case .dictionary(let newDict)? = value {
            newDict.collectDifferingPaths(from: oldDict, prefix: key.components, into: &candidates)
        } else {
            candidates.append(key)
            for case .dictionary(let dict)? in [old, value] {
                for (child, _) in dict { candidates.append(key.appending(child)) }
            }
        }
        let before = candidates.map { resolve($0)?.value }
        modify(layer) { dict in _ = dict.setValue(value, at: key.components[...]) }
        return zip(candidates, before).filter { resolve($0.0)?.value != $0.1 }.map(\.0)
    }

    /// The Observation key paths of tracked keys whose value depends on `changed`: the keys
    /// themselves, the namespaces above them and the keys below them.
    func trackedKeyPaths(relatedTo changed: [SettingsKey]) -> [any ObservedKeyPath] {
        guard !tracked.isEmpty, !changed.isEmpty else { return [] }
        if tracked.count <= 8 || changed.count > 1 {
            return tracked.filter { entry in changed.contains { $0.isRelated(to: entry.key) } }.map(\.value)
        }
        // One key changed and many are tracked: look up the key and its namespaces directly;
        // keys below it only matter when it is (or was) a namespace, which the scan covers.
        let key = changed[0]
        var found: [any ObservedKeyPath] = []
        for n in 1...key.components.count {
            if let keyPath = tracked[SettingsKey(components: Array(key.components[..<n]))] { found.append(keyPath) }
        }
        for (trackedKey, keyPath) in tracked where trackedKey.components.count > key.components.count && key.isRelated(to: trackedKey) {
            found.append(keyPath)
        }
        return found
    }
}

extension PlistValue {
    /// Whether the value is not a dictionary (so it never merges with other layers).
    var isScalar: Bool {
        if case .dictionary = self { return false }
        return true
    }
}
