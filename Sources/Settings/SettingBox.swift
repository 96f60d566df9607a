import SettingsPlist
import Synchronization

/// What every setting exposes without its value type: used by `$setting`, by reflection
/// (``SettingsStore/bind(_:)``, missing-default warnings) and by the store.
protocol AnySettingBox: AnyObject, Sendable {
    var key: SettingsKey? { get }
    var store: SettingsStore { get }
    var hasDefaultInCode: Bool { get }
    var warnsWhenDefaultIsMissing: Bool { get }
    var typeName: String { get }
    /// Gives a key-less setting its key (and store); a setting with a key keeps it.
    func bind(derivedKey: SettingsKey, store: SettingsStore?)
}

/// The shared state behind one `@Setting`: its key, store, transformer, rules, and a cache of the
/// decoded value that stays valid until the store or the transformer registry changes.
///
/// `Stored` is the non-optional type kept in the store; an optional setting wraps it.
final class SettingBox<Stored: Sendable>: AnySettingBox {
    struct State {
        var key: SettingsKey?
        var store: SettingsStore
        /// The store generation and registry version the cache was filled at.
        var cachedGeneration: UInt64 = .max
        var cachedRegistryVersion: UInt64 = .max
        /// The decoded, rule-checked value; `nil` when no layer has a usable one.
        var cached: Stored?
    }

    let state: Mutex<State>
    let transformer: SettingsTransformer<Stored>
    /// True when the transformer was given for this setting (registered ones then do not apply).
    let transformerIsExplicit: Bool
    let rules: SettingRules<Stored>
    let hasDefaultInCode: Bool
    let warnsWhenDefaultIsMissing: Bool
    let declaredAt: String

    init(
        key: SettingsKey?, store: SettingsStore, transformer: SettingsTransformer<Stored>, explicit: Bool,
        rules: SettingRules<Stored>, hasDefaultInCode: Bool, warnsWhenDefaultIsMissing: Bool, declaredAt: String
    ) {
        self.state = Mutex(State(key: key, store: store))
        self.transformer = transformer
        self.transformerIsExplicit = explicit
        self.rules = rules
        self.hasDefaultInCode = hasDefaultInCode
        self.warnsWhenDefaultIsMissing = warnsWhenDefaultIsMissing
        self.declaredAt = declaredAt
    }

    var key: SettingsKey? { state.withLock { $0.key } }
    var store: SettingsStore { state.withLock { $0.store } }
    var typeName: String { activeTransformer.typeName }

    /// The transformer in force: this setting's own, else a registered one, else the built-in one.
    var activeTransformer: SettingsTransformer<Stored> {
        if transformerIsExplicit { return transformer }
        return SettingsTransformers.registered(for: Stored.self) ?? transformer
    }

    func bind(derivedKey: SettingsKey, store: SettingsStore?) {
        state.withLock { s in
            if s.key == nil { s.key = derivedKey }
            if let store, s.store !== store {
                s.store = store
                s.cachedGeneration = .max
            }
        }
    }

    /// The key, or a stop with a message saying how to give one.
    private func requireKey(_ key: SettingsKey?) -> SettingsKey {
        guard let key else {
            preconditionFailure("""
                @Setting declared at \(declaredAt) has no key and is not bound: give it a key, \
                @Setting("Name", ...), or bind its container with SettingsStore.bind(container) \
                so the key is derived from the property name.
                """)
        }
        return key
    }

    /// The current value after rules, `nil` when there is none. Fast when nothing changed since
    /// the last read: one lock, two atomic loads, no hashing.
    func read() -> Stored? {
        let registryVersion = SettingsTransformers.currentVersion
        let hit: (Bool, Stored?, SettingsKey?, SettingsStore) = state.withLock { s in
            let generation = s.store.generation
            if s.cachedGeneration == generation && s.cachedRegistryVersion == registryVersion {
                return (true, s.cached, s.key, s.store)
            }
            return (false, nil, s.key, s.store)
        }
        if hit.0 { return hit.1 }
        return refresh(key: requireKey(hit.2), store: hit.3, registryVersion: registryVersion)
    }

    /// Reads through the store, decodes, applies rules, and caches the result.
    private func refresh(key: SettingsKey, store: SettingsStore, registryVersion: UInt64) -> Stored? {
        // Read the generation before the value: a change racing with us leaves the cache stale-marked.
        let generation = store.generation
        let resolved = store.state.withLock { $0.resolve(key) }
        var value: Stored?
        if let resolved {
            do {
                value = try activeTransformer.decode(resolved.value, key: key, source: resolved.layer)
            } catch {
                SettingsDiagnostics.report(SettingsDiagnostic(.typeMismatch, key: key, error.description + "; using the default"))
            }
        }
        if !rules.isEmpty { value = rules.apply(value, changed: { _, _ in false }).0 }
        state.withLock { s in
            guard s.store === store else { return }
            s.cached = value
            s.cachedGeneration = generation
            s.cachedRegistryVersion = registryVersion
        }
        return value
    }

    /// Writes `value` (after rules) to the user layer; `nil` removes the user's value.
    func write(_ value: Stored?) {
        let (boundKey, store) = state.withLock { ($0.key, $0.store) }
        let key = requireKey(boundKey)
        var newValue = value
        if !rules.isEmpty {
            let (ruled, fired) = rules.apply(value, changed: { a, b in (a == nil) != (b == nil) || !Self.same(a, b) })
            if !fired.isEmpty {
                SettingsDiagnostics.report(SettingsDiagnostic(
                    .ruleApplied, key: key,
                    "rule \(fired.joined(separator: ", ")) changed the value written to '\(key.path)'"))
            }
            newValue = ruled
        }
        guard let newValue else {
            store.removeValue(for: key)
            return
        }
        do {
            store.set(try activeTransformer.encode(newValue), for: key)
        } catch {
            SettingsDiagnostics.report(SettingsDiagnostic(
                .typeMismatch, key: key, "cannot store a \(typeName) under '\(key.path)': \(error); the value was not written"))
        }
    }

    /// Compares two values through their plist form (works for any type with a transformer).
    private static func same(_ a: Stored?, _ b: Stored?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        if let a = a as? any Equatable { return a.isEqual(to: b) }
        return false
    }
}

extension Equatable {
    /// `self == other` when `other` has the same type.
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
