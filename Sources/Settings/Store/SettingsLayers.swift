import SettingsPlist

/// The four layers of a store's values and the rules that combine them: which layer a read is
/// served from, how a namespace merges with the layers below, what a write changes, and why a
/// key has no value. A plain value: the store keeps one behind its lock, and tests use it alone.
///
/// ```swift
/// var layers = SettingsLayers()
/// layers.modify(.defaults) { $0["Network"] = ["timeout": 30, "retries": 3] }
/// _ = layers.write(60, at: "Network/timeout", in: .user, comparing: true)   // .key
/// layers.resolve("Network/timeout")?.layer                                  // .user
/// layers.resolve("Network")?.value                                          // ["timeout": 60, "retries": 3]
/// ```
struct SettingsLayers: Hashable, Sendable {
    /// One dictionary per ``SettingsLayer``, indexed by its raw value.
    var dictionaries = [PlistDictionary](repeating: PlistDictionary(), count: SettingsLayer.allCases.count)

    /// One layer's dictionary (read-only; change it with ``modify(_:_:)``).
    subscript(layer: SettingsLayer) -> PlistDictionary { dictionaries[layer.rawValue] }

    /// Changes one layer in place (no copy of the layer's storage).
    mutating func modify<R>(_ layer: SettingsLayer, _ body: (inout PlistDictionary) -> R) -> R {
        body(&dictionaries[layer.rawValue])
    }

    /// The effective value and its layer. A dictionary is merged with the dictionaries at the
    /// same key in lower layers, so a namespace read shows every key visible under it.
    func resolve(_ key: SettingsKey) -> (value: PlistValue, layer: SettingsLayer)? {
        resolve(key, from: .volatile)
    }

    /// The effective value as if the layers above `first` were empty.
    func resolve(_ key: SettingsKey, from first: SettingsLayer) -> (value: PlistValue, layer: SettingsLayer)? {
        for layer in SettingsLayer.allCases where layer >= first {
            guard let value = dictionaries[layer.rawValue].value(at: key.components) else { continue }
            guard case .dictionary(var merged) = value else { return (value, layer) }
            for lower in SettingsLayer.allCases where lower > layer {
                if case .dictionary(let below)? = dictionaries[lower.rawValue].value(at: key.components) {
                    merged = merged.merged(over: below)
                }
            }
            return (.dictionary(merged), layer)
        }
        return nil
    }

    /// Every layer merged: what reads see, as one dictionary.
    var effectiveValues: PlistDictionary {
        SettingsLayer.allCases.reversed().reduce(PlistDictionary()) { lower, layer in self[layer].merged(over: lower) }
    }

    /// The key paths whose effective value differs from `before`'s, given that only `layer`
    /// changed between the two.
    func effectiveChanges(from before: SettingsLayers, in layer: SettingsLayer) -> [SettingsKey] {
        var candidates: [SettingsKey] = []
        self[layer].collectDifferingPaths(from: before[layer], prefix: [], into: &candidates)
        return candidates.filter { before.resolve($0)?.value != resolve($0)?.value }
    }

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
            if !dictionaries[i].isEmpty { return false }
            i += 1
        }
        return true
    }

    /// Why `key` has no value, for a key in a namespace: the first step of its path that is
    /// missing or not a dictionary. `nil` for a top-level key (nothing more to say).
    func explainMissing(_ key: SettingsKey) -> String? {
        guard let namespace = key.parent else { return nil }
        let components = key.components
        for depth in 1..<components.count {
            let prefix = SettingsKey(components: Array(components.prefix(depth)))
            guard let (value, layer) = resolve(prefix) else {
                guard let parent = prefix.parent else { return "there is no namespace '\(prefix.path)'" }
                return "namespace '\(parent.path)' has no dictionary '\(SettingsKey.escape(components[depth - 1]))'"
            }
            guard case .dictionary = value else {
                return "'\(prefix.path)' is \(value.typeNameWithArticle) from \(layer.name), not a namespace"
            }
        }
        return "namespace '\(namespace.path)' has no key '\(SettingsKey.escape(components[components.count - 1]))'"
    }
}

/// Which effective values a write changed.
enum WriteEffect: Equatable {
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

