import SettingsPlist
import SettingsFiles

/// The six built-in layers of a store's values, the read-only external layers between them, and the rules
/// that combine them: which layer a read is served from, how a namespace merges with the layers
/// below, what a write changes, and why a key has no value. A plain value: the store keeps one
/// behind its lock, and tests use it alone.
///
/// ```swift
/// var layers = SettingsLayers()
/// layers.modify(.defaults) { $0["Network"] = ["timeout": 30, "retries": 3] }
/// _ = layers.write(60, at: "Network/timeout", in: .user, comparing: true)   // .key
/// layers.resolve("Network/timeout")?.layer                                  // .user
/// layers.resolve("Network")?.value                                          // ["timeout": 60, "retries": 3]
/// ```
struct SettingsLayers: Hashable, Sendable {
    /// One dictionary per built-in ``SettingsLayer``, indexed by its ``SettingsLayer/builtInIndex``.
    var dictionaries = [PlistDictionary](repeating: PlistDictionary(), count: SettingsLayer.allCases.count)
    /// The read-only external layers (see ``ExternalLayer``), in the order they were added.
    var external: [ExternalLayer] = []
    /// Every layer, highest first: the built-in ones with the external ones between them.
    private(set) var stack: [Entry] = SettingsLayer.allCases.indices.map(Entry.builtIn)

    /// A place in ``stack``.
    enum Entry: Hashable, Sendable {
        /// A built-in layer, by index.
        case builtIn(Int)
        /// An external layer, by index in ``SettingsLayers/external``.
        case external(Int)
    }

    /// One layer's dictionary (read-only; change it with ``modify(_:_:)``). An external layer has
    /// none: it is asked key by key.
    subscript(layer: SettingsLayer) -> PlistDictionary {
        layer.builtInIndex.map { dictionaries[$0] } ?? PlistDictionary()
    }

    /// Changes one built-in layer in place (no copy of the layer's storage); an external layer's
    /// values cannot be changed (`body` gets an empty scratch dictionary).
    mutating func modify<R>(_ layer: SettingsLayer, _ body: (inout PlistDictionary) -> R) -> R {
        guard let index = layer.builtInIndex else {
            var scratch = PlistDictionary()
            return body(&scratch)
        }
        return body(&dictionaries[index])
    }

    /// The effective value and its layer. A dictionary is merged with the dictionaries at the
    /// same key in lower layers, so a namespace read shows every key visible under it.
    func resolve(_ key: SettingsKey) -> (value: PlistValue, layer: SettingsLayer)? {
        resolve(key, fromPosition: 0)
    }

    /// The effective value as if the layers above `first` were empty.
    func resolve(_ key: SettingsKey, from first: SettingsLayer) -> (value: PlistValue, layer: SettingsLayer)? {
        guard let position = position(of: first) else { return nil }
        return resolve(key, fromPosition: position)
    }

    /// The effective value as if the layers above position `first` of ``stack`` were empty.
    func resolve(_ key: SettingsKey, fromPosition first: Int) -> (value: PlistValue, layer: SettingsLayer)? {
        var position = first
        while position < stack.count {
            defer { position += 1 }
            guard let value = value(at: key, position: position) else { continue }
            guard case .dictionary(var merged) = value else { return (value, layer(at: position)) }
            for lower in stack.indices where lower > position {
                if case .dictionary(let below)? = self.value(at: key, position: lower, hinted: false) {
                    merged = merged.merged(over: below)
                }
            }
            return (.dictionary(merged), layer(at: position))
        }
        return nil
    }

    /// The value one layer holds at `key`. An external layer is given the value of the layers
    /// below as a hint of the type wanted (unless `hinted` is `false`).
    private func value(at key: SettingsKey, position: Int, hinted: Bool = true) -> PlistValue? {
        switch stack[position] {
        case .builtIn(let index):
            return dictionaries[index].value(at: key.components)
        case .external(let index):
            let hint = hinted ? resolve(key, fromPosition: position + 1)?.value : nil
            return external[index].value(for: key, hint: hint)
        }
    }

    /// The layer at a position of ``stack``.
    private func layer(at position: Int) -> SettingsLayer {
        switch stack[position] {
        case .builtIn(let index): SettingsLayer.allCases[index]
        case .external(let index): .provider(external[index].name)
        }
    }

    /// The position of `layer` in ``stack``, or `nil` for an external layer this store lacks.
    func position(of layer: SettingsLayer) -> Int? {
        if external.isEmpty, let index = layer.builtInIndex { return index }
        return stack.indices.first { self.layer(at: $0) == layer }
    }

    /// Every layer merged: what reads see, as one dictionary. External layers cannot list their
    /// keys: they show only at the keys some other layer has.
    var effectiveValues: PlistDictionary {
        var merged = dictionaries.reversed().reduce(PlistDictionary()) { lower, upper in upper.merged(over: lower) }
        guard !external.isEmpty else { return merged }
        for key in merged.changedLeafPaths(from: PlistDictionary()) {
            if case let (value, .provider)? = resolve(key) { merged.setValue(value, at: key.components[...]) }
        }
        return merged
    }

    /// The key paths whose effective value differs from `before`'s, given that only `layer`
    /// changed between the two.
    func effectiveChanges(from before: SettingsLayers, in layer: SettingsLayer) -> [SettingsKey] {
        var candidates: [SettingsKey] = []
        if case .provider(let name) = layer {
            // An external layer cannot list what changed: compare every key it was asked for.
            candidates = (external.first { $0.name == name } ?? before.external.first { $0.name == name })?.askedKeys ?? []
        } else {
            self[layer].collectDifferingPaths(from: before[layer], prefix: [], into: &candidates)
        }
        // A changed lock is announced even when the value stays: the key's writability changed.
        guard layer != .locked else { return candidates }
        return candidates.filter { before.resolve($0)?.value != resolve($0)?.value }
    }

    // MARK: External layers

    /// Adds an external layer (it must have a name no other layer of the store has).
    mutating func addExternal(_ layer: ExternalLayer) {
        external.append(layer)
        restack()
    }

    /// Replaces the external layer of the same name (its lookup changed); `false` when there is none.
    mutating func replaceExternal(_ layer: ExternalLayer) -> Bool {
        guard let index = external.firstIndex(where: { $0.name == layer.name }) else { return false }
        external[index] = layer
        return true
    }

    /// Removes the external layer called `name`.
    mutating func removeExternal(named name: String) {
        external.removeAll { $0.name == name }
        restack()
    }

    /// Rebuilds ``stack``: above each built-in layer, the external layers placed there, the one
    /// added first highest; below the last built-in layer, those placed below it.
    private mutating func restack() {
        var entries: [Entry] = []
        for slot in 0...dictionaries.count {
            entries += external.indices.filter { external[$0].slot == slot }.map(Entry.external)
            if slot < dictionaries.count { entries.append(.builtIn(slot)) }
        }
        stack = entries
    }

    // MARK: Writing

    /// Writes (or with `nil` removes) one key of one layer.
    ///
    /// - Parameters:
    ///   - value: the new value, or `nil`.
    ///   - key: the key path.
    ///   - layer: the layer written (a built-in one).
    ///   - comparing: whether to work out which effective values changed (only when someone
    ///     observes: it costs look-ups in the other layers).
    /// - Returns: `nil` when the layer already held `value`; otherwise which effective values
    ///   changed (``WriteEffect/none`` when not `comparing`).
    mutating func write(_ value: PlistValue?, at key: SettingsKey, in layer: SettingsLayer, comparing: Bool) -> WriteEffect? {
        guard let index = layer.builtInIndex else { return nil }
        // The common case: a scalar written with nothing above it. Its effective value is the
        // value itself, so only an absent old value needs a look at the layers below.
        if !comparing || isOwnEffectiveValue(value, in: layer) {
            let old = key.isTopLevel
                ? dictionaries[index].replaceValue(value, forKey: key.components[0])
                : dictionaries[index].setValue(value, at: key.components[...])
            guard old != value else { return nil }
            guard comparing else { return WriteEffect.none }
            switch old {
            case nil:
                guard let position = position(of: layer) else { return .key }
                return resolve(key, fromPosition: position + 1)?.value == value ? WriteEffect.none : .key
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

    /// Whether `value`, written to `layer`, is its key's effective value as it stands: a scalar
    /// with nothing above it (a dictionary merges with the layers below; a removal reveals them).
    func isOwnEffectiveValue(_ value: PlistValue?, in layer: SettingsLayer) -> Bool {
        value?.isScalar == true && higherLayersAreEmpty(than: layer)
    }

    /// Whether every layer above `layer` is empty (an external layer never counts as empty: it
    /// cannot tell).
    func higherLayersAreEmpty(than layer: SettingsLayer) -> Bool {
        guard external.isEmpty, let end = layer.builtInIndex else {
            guard let end = position(of: layer) else { return false }
            return stack[..<end].allSatisfy { if case .builtIn(let i) = $0 { dictionaries[i].isEmpty } else { false } }
        }
        var i = 0
        while i < end {
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

