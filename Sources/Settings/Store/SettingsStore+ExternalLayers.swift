public import SettingsPlist
import Synchronization

/// A read-only layer whose values are kept outside the store (a configuration provider, say),
/// asked key by key: its name, its place among the built-in layers, and its lookup.
struct ExternalLayer: Hashable, Sendable {
    /// The name ``SettingsLayer/provider(_:)`` carries.
    let name: String
    /// The built-in layer it sits directly above (``SettingsLayers/dictionaries``'s count: below all).
    let slot: Int
    /// The value at a key, given the value of the layers below as a hint of the type wanted.
    let lookup: @Sendable (SettingsKey, PlistValue?) -> PlistValue?
    /// The keys it was asked for: what to compare when its values change (it cannot list them).
    let asked: AskedKeys
    /// Bumped by every update, so that two versions of the layer differ.
    let version: Int

    /// The value at `key`, remembering that `key` was asked for.
    func value(for key: SettingsKey, hint: PlistValue?) -> PlistValue? {
        asked.insert(key)
        return lookup(key, hint)
    }

    /// The keys asked for so far.
    var askedKeys: [SettingsKey] { asked.keys }

    static func == (lhs: ExternalLayer, rhs: ExternalLayer) -> Bool {
        lhs.name == rhs.name && lhs.slot == rhs.slot && lhs.version == rhs.version
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(version)
    }
}

/// The keys an external layer was asked for. Taken under the store's lock (this lock is never
/// held while taking the store's).
final class AskedKeys: Sendable {
    private let keySet: Mutex<Set<SettingsKey>>

    init(_ keys: [SettingsKey]) { keySet = Mutex(Set(keys)) }

    func insert(_ key: SettingsKey) { _ = keySet.locked { $0.insert(key) } }

    var keys: [SettingsKey] { keySet.locked { Array($0) } }
}

nonisolated extension SettingsStore {
    /// Adds a read-only layer whose values come from outside the store: a configuration
    /// provider, a secrets service, anything that can answer "what is the value at this key?".
    ///
    /// Reads see its values where it sits (``SettingsLayerPlacement/above(_:)`` or
    /// ``SettingsLayerPlacement/below(_:)`` a built-in layer; of two placed at the same spot, the
    /// one added first is higher), ``source(of:)`` names it as ``SettingsLayer/provider(_:)``,
    /// and ``updateExternalLayer(named:lookup:)`` announces its changes to every observer like any
    /// other change. Writes still go to the user's file. The `SettingsConfiguration` package adds
    /// any swift-configuration `ConfigProvider` this way.
    ///
    /// ```swift
    /// let environment = ProcessInfo.processInfo.environment
    /// store.addExternalLayer(named: "environment", placement: .above(.user)) { key, _ in
    ///     environment["APP_" + key.components.joined(separator: "_").uppercased()].map(PlistValue.string)
    /// }
    /// store.source(of: "port")   // .provider("environment") when APP_PORT is set
    /// ```
    ///
    /// The lookup is called under the store's lock, so it must be quick and must not use this
    /// store. An external layer cannot list its keys: ``effectiveValues`` shows its values only at
    /// keys another layer has, and ``contents(of:)`` of it is empty.
    ///
    /// - Parameters:
    ///   - name: the layer's name, unique in the store (``SettingsLayer/provider(_:)`` carries it).
    ///   - placement: where it sits among the built-in layers.
    ///   - lookup: the value at a key (`nil` when it has none), given the value of the layers
    ///     below it as a hint of the type wanted (`nil` when they have none).
    /// - Returns: `false` (and nothing changes) when the store already has a layer of that name.
    @discardableResult
    public func addExternalLayer(
        named name: String, placement: SettingsLayerPlacement,
        lookup: @escaping @Sendable (_ key: SettingsKey, _ hint: PlistValue?) -> PlistValue?
    ) -> Bool {
        var added = false
        replace(.provider(name), origin: .provider) { s in
            guard !s.layers.external.contains(where: { $0.name == name }) else { return }
            // Until it is asked, compare the keys the other layers have when it changes.
            let known = s.layers.effectiveValues.changedLeafPaths(from: PlistDictionary())
            s.layers.addExternal(ExternalLayer(
                name: name, slot: s.layers.slot(for: placement), lookup: lookup, asked: AskedKeys(known), version: 0))
            added = true
        }
        return added
    }

    /// Gives an external layer new values: the keys whose effective value changed are announced
    /// (origin ``SettingsChange/Origin/provider``) to ``onChange(_:)``, ``changes``, every
    /// `@Setting`'s observers and the Observation framework.
    ///
    /// ```swift
    /// store.updateExternalLayer(named: "environment") { key, _ in newValues[key] }
    /// ```
    ///
    /// - Parameters:
    ///   - name: the layer's name.
    ///   - lookup: the new lookup (see ``addExternalLayer(named:placement:lookup:)``).
    public func updateExternalLayer(
        named name: String, lookup: @escaping @Sendable (_ key: SettingsKey, _ hint: PlistValue?) -> PlistValue?
    ) {
        replace(.provider(name), origin: .provider) { s in
            guard let old = s.layers.external.first(where: { $0.name == name }) else { return }
            _ = s.layers.replaceExternal(ExternalLayer(
                name: name, slot: old.slot, lookup: lookup, asked: old.asked, version: old.version + 1))
        }
    }

    /// Removes an external layer; the values it hid show again (and are announced).
    ///
    /// - Parameter name: the layer's name.
    public func removeExternalLayer(named name: String) {
        replace(.provider(name), origin: .provider) { s in s.layers.removeExternal(named: name) }
    }

    /// The names of the store's external layers, highest first.
    public var externalLayerNames: [String] {
        withState { s in
            s.layers.stack.compactMap { entry in
                if case .external(let index) = entry { s.layers.external[index].name } else { nil }
            }
        }
    }

    /// Reads the file now if another process or a person changed it since it was last read (the
    /// file watcher does this by itself moments after a change; call this when you need the
    /// newest values at once). Changed values are announced as ``SettingsChange/Origin/externalFile``.
    /// Does nothing for an in-memory store.
    ///
    /// ```swift
    /// await store.reload()
    /// let level = store["log/level"]
    /// ```
    public nonisolated func reload() async {
        guard let backend else { return }  // an in-memory store has no file
        await Self.reload(self, backend)
    }
}

extension SettingsLayers {
    /// The slot (see ``ExternalLayer/slot``) a placement names.
    func slot(for placement: SettingsLayerPlacement) -> Int {
        func slot(of layer: SettingsLayer) -> Int {
            layer.builtInIndex ?? external.first { .provider($0.name) == layer }?.slot ?? dictionaries.count
        }
        switch placement {
        case .above(let layer): return slot(of: layer)
        case .below(let layer): return layer.builtInIndex.map { $0 + 1 } ?? slot(of: layer)
        }
    }
}
