import SettingsPlist
public import Synchronization
public import Observation

/// What every setting exposes without its value type: used by `$setting`, by reflection
/// (``SettingsStore/bind(_:to:)``, missing-default warnings) and by the store.
protocol AnySettingBox: AnyObject, Sendable {
    var key: SettingsKey? { get }
    var store: SettingsStore { get }
    var hasDefaultInCode: Bool { get }
    var warnsWhenDefaultIsMissing: Bool { get }
    var typeName: String { get }
    /// What the setting tells a schema (``SettingsSchema``): asked only when one is built.
    var facts: SettingFacts { get }
    /// The key's earlier names (`formerly:`), newest first.
    var formerly: [SettingsKey] { get }
    /// Gives a key-less setting its key (and store); a setting with a key keeps it.
    func bind(derivedKey: SettingsKey, store: SettingsStore?)
}

/// The cache-and-observe box behind one `@Setting` or `@StoredModel`: its key, store, how
/// values convert, and a cache of the final value (decoded, rule-checked, default applied) that
/// stays valid until the store or the transformer registry changes.
///
/// `@Setting` builds its ``Conversion`` from a transformer and rules; `@StoredModel` from the
/// model archive. Everything else (caching, observation, binding, writing) is this one class.
///
/// The cache hit is `@inlinable` so it is specialised for the value's type where it is read: one
/// uncontended lock, two atomic loads, no hashing, no generic metadata look-ups.
@usableFromInline
final class SettingBox<Value: Sendable>: AnySettingBox {
    @usableFromInline
    struct State {
        @usableFromInline var key: SettingsKey?
        @usableFromInline var store: SettingsStore
        /// The store generation and registry version the cache was filled at.
        @usableFromInline var cachedGeneration: UInt64 = .max
        @usableFromInline var cachedRegistryVersion: UInt64 = .max
        /// The final value, valid when both versions match.
        @usableFromInline var cached: Value?
        /// The stored value `cached` was converted from (kept only when the conversion asks:
        /// an unchanged stored value is then not converted again).
        @usableFromInline var cachedStored: PlistValue?
        /// The key path the Observation framework is told about on each read (set on the first read).
        @usableFromInline var observed: (any ObservedKeyPath)?
        /// The transformer registry's version at which no transformer was registered for
        /// `Value` (``SettingsTransformers``; nothing is registered at version 0): while it is
        /// current, a ``SettingBox/builtIn`` setting writes its stored case directly.
        @usableFromInline var builtInAt: UInt64 = 0

        @inlinable init(key: SettingsKey?, store: SettingsStore) {
            self.key = key
            self.store = store
        }
    }

    /// Where a conversion runs: the key, the layer the stored value came from, the store (whose
    /// diagnostics handler hears about problems), and whether the result becomes the cached
    /// value (`false` for the old and new values an observer is given).
    @usableFromInline
    struct Context {
        @usableFromInline var key: SettingsKey
        @usableFromInline var layer: SettingsLayer?
        @usableFromInline var store: SettingsStore
        @usableFromInline var isCurrent: Bool

        @inlinable init(key: SettingsKey, layer: SettingsLayer?, store: SettingsStore, isCurrent: Bool) {
            self.key = key
            self.layer = layer
            self.store = store
            self.isCurrent = isCurrent
        }
    }

    /// How values move between the store and Swift.
    @usableFromInline
    struct Conversion: Sendable {
        /// The final value for what the store holds (`nil`: no layer has the key).
        @usableFromInline var read: @Sendable (_ stored: PlistValue?, _ context: Context) -> Value
        /// The plist value to write for `value`, `.some(nil)` to remove the user's value, or
        /// `nil` to write nothing (the problem was reported).
        @usableFromInline var write: @Sendable (_ value: Value, _ context: Context) -> PlistValue??
        /// The stored type's name, for diagnostics.
        @usableFromInline var typeName: @Sendable () -> String
        /// Whether a stored value equal to the one last converted reuses the cached value (for
        /// conversions that cost more than a comparison, such as decoding a model).
        @usableFromInline var reusesUnchangedStoredValue: Bool
        /// What the setting tells a schema; never called on a read or a write.
        @usableFromInline var facts: @Sendable () -> SettingFacts

        @inlinable init(
            read: @escaping @Sendable (PlistValue?, Context) -> Value,
            write: @escaping @Sendable (Value, Context) -> PlistValue??,
            typeName: @escaping @Sendable () -> String,
            reusesUnchangedStoredValue: Bool = false,
            facts: @escaping @Sendable () -> SettingFacts = { SettingFacts() }
        ) {
            self.read = read
            self.write = write
            self.typeName = typeName
            self.reusesUnchangedStoredValue = reusesUnchangedStoredValue
            self.facts = facts
        }
    }

    @usableFromInline let state: Mutex<State>
    @usableFromInline let conversion: Conversion
    @usableFromInline let hasDefaultInCode: Bool
    @usableFromInline let warnsWhenDefaultIsMissing: Bool
    /// Whether binding a container may give the box a key derived from the property name.
    @usableFromInline let takesDerivedKey: Bool
    @usableFromInline let declaredAt: String
    /// The key's earlier names (`formerly:`), declared to the store the box is bound to.
    @usableFromInline let formerly: [SettingsKey]
    /// The names of the setting's rules, for ``Setting/explanation``.
    @usableFromInline let ruleNames: [String]
    /// The human title and help text (`title:`, `help:`), for schemas and editors.
    @usableFromInline let texts: SettingTexts
    /// For a setting of a built-in scalar type stored through the type's own transformer with
    /// no rules: which type, so that a write builds the stored case itself (``BuiltInScalar``).
    @usableFromInline let builtIn: BuiltInScalar?
    /// The key given at the declaration. A key, once a setting has one, never changes (binding
    /// gives one only to a key-less setting), so a write reads this one without the lock.
    @usableFromInline let declaredKey: SettingsKey?

    /// Creates a box with its conversion.
    @inlinable
    init(
        key: SettingsKey?, store: SettingsStore, conversion: Conversion, hasDefaultInCode: Bool,
        warnsWhenDefaultIsMissing: Bool, takesDerivedKey: Bool = true, declaredAt: String, formerly: [SettingsKey] = [],
        ruleNames: [String] = [], texts: SettingTexts = SettingTexts(), builtIn: BuiltInScalar? = nil
    ) {
        self.state = Mutex(State(key: key, store: store))
        self.builtIn = builtIn
        self.declaredKey = key
        self.conversion = conversion
        self.hasDefaultInCode = hasDefaultInCode
        self.warnsWhenDefaultIsMissing = warnsWhenDefaultIsMissing
        self.takesDerivedKey = takesDerivedKey
        self.declaredAt = declaredAt
        self.formerly = formerly
        self.ruleNames = ruleNames
        self.texts = texts
        if let key, !formerly.isEmpty { store.registerRename(of: key, formerly: formerly) }
    }

    /// Creates a box for a setting whose store holds `Stored` values.
    ///
    /// - Parameters:
    ///   - wrap: the final value for a (rule-checked) stored value or its absence.
    ///   - unwrap: the stored value for a final value (`nil` removes the key).
    ///   - builtIn: the built-in scalar type `Value` is, when `unwrap` is the identity, the
    ///     transformer is the type's own and there are no rules (see ``BuiltInScalar``).
    ///
    /// Inlinable so the conversion closures are specialised for the setting's types where the
    /// setting is declared: no generic metadata look-ups on each read or write.
    @inlinable
    convenience init<Stored: Sendable>(
        key: SettingsKey?, store: SettingsStore, transformer: SettingsTransformer<Stored>, explicit: Bool,
        rules: SettingRules<Stored>, hasDefaultInCode: Bool, warnsWhenDefaultIsMissing: Bool, declaredAt: String,
        formerly: [SettingsKey] = [], texts: SettingTexts = SettingTexts(), builtIn: BuiltInScalar? = nil,
        wrap: @escaping @Sendable (Stored?) -> Value, unwrap: @escaping @Sendable (Value) -> Stored?
    ) {
        // The registry is consulted once per registry version, not once per read or write.
        let hasRules = !rules.isEmpty
        let resolved = Mutex<(version: UInt64, transformer: SettingsTransformer<Stored>)>((0, transformer))
        let active: @Sendable () -> SettingsTransformer<Stored> = {
            let version = SettingsTransformers.currentVersion
            if explicit || version == 0 { return transformer }
            if let cached = resolved.locked({ $0.version == version ? $0.transformer : nil }) { return cached }
            let current = SettingsTransformers.registered(for: Stored.self) ?? transformer
            resolved.locked { $0 = (version, current) }
            return current
        }
        let conversion = Conversion(
            read: { stored, context in
                var value: Stored?
                if let stored {
                    do {
                        value = try active().decode(stored, key: context.key, source: context.layer)
                    } catch {
                        context.store.report(SettingsDiagnostic(.typeMismatch, key: context.key, "\(error); using the default"))
                    }
                }
                if hasRules { value = rules.apply(value, changed: { _, _ in false }).0 }
                return wrap(value)
            },
            write: { newValue, context in
                let key = context.key
                var value = unwrap(newValue)
                if hasRules {
                    let (ruled, fired) = rules.apply(value, changed: { a, b in !sameValue(a, b) })
                    if !fired.isEmpty {
                        context.store.report(SettingsDiagnostic(
                            .ruleApplied, key: key,
                            "rule \(fired.joined(separator: ", ")) changed the value written to '\(key.path)'"))
                    }
                    value = ruled
                }
                guard let value else { return .some(nil) }
                let transformer = active()
                do {
                    return .some(try transformer.encode(value))
                } catch {
                    context.store.report(SettingsDiagnostic(
                        .typeMismatch, key: key,
                        "cannot store a \(transformer.typeName) under '\(key.path)': \(error); the value was not written"))
                    return nil
                }
            },
            typeName: { active().typeName },
            facts: {
                let transformer = active()
                let builtIn = !explicit && SettingsTransformers.registered(for: Stored.self) == nil
                return SettingFacts.of(transformer: transformer, builtIn: builtIn, rules: rules,
                                       defaultInCode: hasDefaultInCode ? { unwrap(wrap(nil)) } : nil)
            }
        )
        self.init(key: key, store: store, conversion: conversion, hasDefaultInCode: hasDefaultInCode,
                  warnsWhenDefaultIsMissing: warnsWhenDefaultIsMissing, declaredAt: declaredAt, formerly: formerly,
                  ruleNames: rules.rules.map(\.name), texts: texts, builtIn: explicit || hasRules ? nil : builtIn)
    }

    var key: SettingsKey? { state.locked { $0.key } }
    var store: SettingsStore { state.locked { $0.store } }
    var typeName: String { conversion.typeName() }

    var facts: SettingFacts {
        var facts = conversion.facts()
        if facts.typeName.isEmpty { facts.typeName = typeName }
        facts.title = texts.title
        facts.help = texts.help
        return facts
    }

    func bind(derivedKey: SettingsKey, store: SettingsStore?) {
        let (key, bound) = state.locked { s in
            if s.key == nil && takesDerivedKey { s.key = derivedKey }
            if let store, s.store !== store {
                s.store = store
                s.cachedGeneration = .max
                s.cachedStored = nil
                s.observed = nil
            }
            return (s.key, s.store)
        }
        // The store it is bound to learns the key's old names (no lock held: it may move values).
        if let key, !formerly.isEmpty { bound.registerRename(of: key, formerly: formerly) }
    }

    /// The key, or a stop with a message saying how to give one.
    @usableFromInline
    func requireKey(_ key: SettingsKey?) -> SettingsKey {
        guard let key else {
            preconditionFailure("""
                @Setting declared at \(declaredAt) has no key and is not bound: give it a key, \
                @Setting("Name", ...), or bind its container with SettingsStore.bind(container) \
                so the key is derived from the property name.
                """)
        }
        return key
    }

    /// The current value: from the cache when nothing changed since it was filled. The read is
    /// reported to the Observation framework.
    @inlinable
    func read() -> Value {
        let registryVersion = SettingsTransformers.currentVersion
        let hit: Value? = state.locked { s in
            guard s.cachedGeneration == s.store.generation && s.cachedRegistryVersion == registryVersion,
                  let observed = s.observed else { return nil }
            // Reporting the read records it only inside `withObservationTracking`; it calls no
            // user code, so it is safe under the lock (and avoids retaining the store here).
            s.store.values.registrar.access(s.store, keyPath: observed)
            return s.cached
        }
        if let hit { return hit }
        return refresh(registryVersion: registryVersion)
    }

    /// Whether no transformer is registered for `Value` at the registry's `version` (read
    /// before the registry is asked: a registration made meanwhile changes the version, so the
    /// answer, remembered in ``State/builtInAt``, is asked again at the next write).
    @usableFromInline
    func noTransformerRegistered(at version: UInt64) -> Bool {
        guard builtIn != nil, SettingsTransformers.registered(for: Value.self) == nil else { return false }
        state.locked { $0.builtInAt = version }
        return true
    }

    /// Reads through the store, converts, and fills the cache.
    @usableFromInline
    func refresh(registryVersion: UInt64) -> Value {
        let (boundKey, store) = state.locked { ($0.key, $0.store) }
        let key = requireKey(boundKey)
        // Read the generation before the value: a change racing with us leaves the cache stale-marked.
        let generation = store.generation
        let resolved = store.withState { $0.resolve(key) }
        let reuses = conversion.reusesUnchangedStoredValue
        let known: Value? = !reuses ? nil : state.locked { s in
            s.store === store && s.cachedStored != nil && s.cachedStored == resolved?.value
                && s.cachedRegistryVersion == registryVersion ? s.cached : nil
        }
        let value = known ?? conversion.read(resolved?.value, Context(key: key, layer: resolved?.layer, store: store, isCurrent: true))
        let observed = state.locked { s in s.observed } ?? store.observationKeyPath(for: key)
        state.locked { s in
            guard s.store === store else { return }
            s.cached = value
            s.cachedStored = reuses ? resolved?.value : nil
            s.cachedGeneration = generation
            s.cachedRegistryVersion = registryVersion
            s.observed = observed
        }
        store.values.registrar.access(store, keyPath: observed)
        return value
    }

    /// Writes `value` (after rules) to the user layer, or removes the user's value.
    @inlinable
    func write(_ value: Value) {
        let registryVersion = SettingsTransformers.currentVersion
        if let builtIn {
            // A built-in scalar with nothing to apply: its stored case, built here, is what the
            // conversion would return (the transformer is the type's own: none is registered).
            let (store, ownTransformer) = state.locked { ($0.store, $0.builtInAt == registryVersion) }
            if ownTransformer || noTransformerRegistered(at: registryVersion), let plist = builtIn.plist(value) {
                // locked: reported, nothing written
                if let declaredKey {
                    _ = store.writeUserValue(plist, for: declaredKey, resolving: false)
                } else {
                    _ = store.writeUserValue(plist, for: requireKey(state.locked { $0.key }), resolving: false)
                }
                return
            }
        }
        let (boundKey, store) = state.locked { ($0.key, $0.store) }
        let key = requireKey(boundKey)
        guard let plist = conversion.write(value, Context(key: key, layer: .user, store: store, isCurrent: true)) else { return }
        let caching = conversion.reusesUnchangedStoredValue && plist != nil
        guard let stored = store.writeUserValue(plist, for: key, resolving: caching) else { return }  // locked: reported, nothing written
        if caching {
            // The next read finds what was just written and skips converting it back.
            state.locked { s in
                guard s.store === store else { return }
                s.cached = value
                s.cachedStored = stored
            }
        }
    }
}

/// A setting's human text: a short title (a form's label, KConfigXT's `label`, GSettings'
/// `summary`) and help (`whatsThis`, `description`), as `title:` and `help:` give them.
@usableFromInline
struct SettingTexts: Sendable {
    @usableFromInline var title: String?
    @usableFromInline var help: String?

    @inlinable init(title: String? = nil, help: String? = nil) {
        self.title = title
        self.help = help
    }
}

/// Whether two optional values are equal, for types that are `Equatable`; otherwise `false`
/// (so a rule's effect on a non-Equatable type is always reported).
@usableFromInline
func sameValue<T>(_ a: T?, _ b: T?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    if let a = a as? any Equatable { return a.isEqual(to: b) }
    return false
}

extension Equatable {
    /// `self == other` when `other` has the same type.
    @usableFromInline
    func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
