import SettingsPlist

/// Which effective values a write changed.
enum WriteEffect {
    /// The layer changed, but no effective value did (a higher layer hides it, or the layer
    /// below held the same value).
    case none
    /// Only the written key's effective value changed (a scalar over a scalar or nothing).
    case key
    /// These key paths' effective values changed.
    case keys([SettingsKey])

    /// The changed keys, given the written one.
    func keys(writing key: SettingsKey) -> [SettingsKey] {
        switch self {
        case .none: []
        case .key: [key]
        case .keys(let keys): keys
        }
    }
}

/// Observation key paths to notify: usually none or one, so the first is kept inline.
struct TrackedKeyPaths {
    var first: (any ObservedKeyPath)?
    var rest: [any ObservedKeyPath] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ keyPath: any ObservedKeyPath) {
        if first == nil { first = keyPath } else { rest.append(keyPath) }
    }
}

extension SettingsStore.State {
    /// Writes (or with `nil` removes) one key of one layer.
    ///
    /// - Parameters:
    ///   - value: the new value, or `nil`.
    ///   - key: the key path.
    ///   - layer: the layer written.
    ///   - comparing: whether to work out which effective values changed (only when someone
    ///     observes: it costs look-ups in the other layers).
    /// - Returns: `nil` when the layer already held `value`; otherwise which effective values
    ///   changed (``WriteEffect/none`` when not `comparing`).
    mutating func write(_ value: PlistValue?, at key: SettingsKey, in layer: SettingsLayer, comparing: Bool) -> WriteEffect? {
        // The common case: a scalar written with nothing above it. Its effective value is the
        // value itself, so only an absent old value needs a look at the layers below.
        if !comparing || (value.map(\.isScalar) == true && higherLayersAreEmpty(than: layer)) {
            let old = modify(layer) { dict in
                key.isTopLevel
                    ? dict.replaceValue(value, forKey: key.components[0])
                    : dict.setValue(value, at: key.components[...])
            }
            guard old != value else { return nil }
            guard comparing else { return WriteEffect.none }
            switch old {
            case nil:
                guard let below = SettingsLayer(rawValue: layer.rawValue + 1) else { return .key }
                return resolve(key, from: below)?.value == value ? WriteEffect.none : .key
            case .dictionary?:
                return .keys([key])  // a namespace became a value: keys below it changed too
            default:
                return .key
            }
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
        return .keys(zip(candidates, before).filter { resolve($0.0)?.value != $0.1 }.map(\.0))
    }

    /// Whether every layer above `layer` is empty.
    func higherLayersAreEmpty(than layer: SettingsLayer) -> Bool {
        var i = 0
        while i < layer.rawValue {
            if !layers[i].isEmpty { return false }
            i += 1
        }
        return true
    }

    /// The Observation key paths of tracked keys whose value depends on what a write changed:
    /// the keys themselves, the namespaces above them and the keys below them.
    func trackedKeyPaths(for effect: WriteEffect, writing key: SettingsKey) -> TrackedKeyPaths {
        var found = TrackedKeyPaths()
        guard !tracked.isEmpty else { return found }
        switch effect {
        case .none:
            break
        case .key:
            // A scalar replaced a scalar: only the key and the namespaces above it can change.
            if key.isTopLevel {
                if let keyPath = tracked[key] { found.append(keyPath) }
            } else {
                for n in 1...key.components.count {
                    if let keyPath = tracked[SettingsKey(components: Array(key.components[..<n]))] { found.append(keyPath) }
                }
            }
        case .keys(let changed):
            guard !changed.isEmpty else { break }
            for (trackedKey, keyPath) in tracked where changed.contains(where: { $0.isRelated(to: trackedKey) }) {
                found.append(keyPath)
            }
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
