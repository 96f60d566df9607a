import SettingsPlist
public import Synchronization
public import Observation

/// A whole model kept as a nested, human-readable dictionary under one key of a
/// ``SettingsStore``: edit it by hand in the plist, observe it like a setting.
///
/// ```swift
/// struct Profile: SettingsModel, Codable { var name = "Guest"; var volume = 0.5 }
/// struct AppSettings {
///     @StoredModel("profile") var profile: Profile
/// }
/// let settings = AppSettings()
/// settings.profile.name             // decoded once, then served from a cache
/// settings.profile.volume = 0.8     // encoded once and written to the store
/// ```
///
/// Reads cost about what an `@Setting` read costs: the decoded model is cached until the stored
/// dictionary changes. Loading follows the model's migrations and never loses data (see
/// ``SettingsModel``); a field that does not decode is reported and its stored value kept.
@propertyWrapper
public struct StoredModel<Model: SettingsModel>: Sendable {
    @usableFromInline let box: StoredModelBox<Model>

    /// The model; setting it writes the whole model to the store at once (persisted soon after).
    @inlinable public var wrappedValue: Model {
        get { box.read() }
        nonmutating set { box.write(newValue) }
    }

    /// `$model`: the key, the store, whether it is set, `reset()` and observation.
    public var projectedValue: StoredModel<Model> { self }

    /// A model stored under `key`.
    ///
    /// - Parameters:
    ///   - key: the key path; the model's fields are a dictionary under it.
    ///   - defaultValue: the model when the store has none (default: `Model()`).
    ///   - store: the store (default: ``SettingsStore/shared``).
    public init(_ key: SettingsKey, default defaultValue: Model = Model(), store: SettingsStore = .shared) {
        box = StoredModelBox(key: key, store: store, defaultValue: defaultValue)
    }

    /// The key the model is stored under.
    public var key: SettingsKey { box.modelKey }

    /// The store the model lives in.
    public var store: SettingsStore { box.store }

    /// Whether the user layer holds the model.
    public var isSet: Bool { box.store.value(for: box.modelKey, in: .user) != nil }

    /// Removes the stored model, so the default shows again.
    public func reset() { box.store.removeValue(for: box.modelKey) }

    /// Calls `handler` with the new and old model whenever the stored model changes, from any
    /// source (see ``Setting/onChange(_:)``).
    ///
    /// - Parameter handler: the new model, then the old one.
    /// - Returns: the observation: keep it to keep receiving changes.
    public func onChange(_ handler: @escaping @Sendable (_ newValue: Model, _ oldValue: Model) -> Void) -> SettingsObservation {
        let box = self.box
        return box.store.onChange(of: box.modelKey, layered: { old, _ in
            let oldModel = old.map { box.decode($0.value) } ?? box.defaultValue
            handler(box.read(), oldModel)
        })
    }

    /// The model's values as an asynchronous sequence: the current one first (unless `initial`
    /// is `false`), then each new one.
    ///
    /// - Parameter initial: whether the sequence starts with the current model.
    public func values(initial: Bool = true) -> AsyncStream<Model> {
        let box = self.box
        return AsyncStream { continuation in
            let observation = box.store.onChange(of: box.modelKey, layered: { _, _ in continuation.yield(box.read()) })
            if initial { continuation.yield(box.read()) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }
}

/// The state behind one `@StoredModel`: the cached model and what loading it learnt.
///
/// The cache hit is `@inlinable`, so it is specialised for the model type where it is read.
@usableFromInline
final class StoredModelBox<Model: SettingsModel>: AnySettingBox {
    @usableFromInline
    struct State {
        @usableFromInline var key: SettingsKey
        @usableFromInline var store: SettingsStore
        @usableFromInline var cachedGeneration: UInt64 = .max
        var cachedRaw: PlistValue?
        @usableFromInline var cached: Model?
        var memory: ModelArchive<Model>.Memory?
        @usableFromInline var observed: (any ObservedKeyPath)?

        init(key: SettingsKey, store: SettingsStore) {
            self.key = key
            self.store = store
        }
    }

    @usableFromInline let state: Mutex<State>
    let defaultValue: Model

    init(key: SettingsKey, store: SettingsStore, defaultValue: Model) {
        state = Mutex(State(key: key, store: store))
        self.defaultValue = defaultValue
    }

    var modelKey: SettingsKey { state.locked { $0.key } }
    var key: SettingsKey? { modelKey }
    var store: SettingsStore { state.locked { $0.store } }
    var hasDefaultInCode: Bool { true }
    var warnsWhenDefaultIsMissing: Bool { false }
    var typeName: String { "\(Model.self)" }

    func bind(derivedKey: SettingsKey, store: SettingsStore?) {
        state.locked { s in
            if let store, s.store !== store {
                s.store = store
                s.cachedGeneration = .max
                s.observed = nil
            }
        }
    }

    /// The model: from the cache while the store is unchanged or the stored dictionary is the
    /// one last decoded.
    @inlinable
    func read() -> Model {
        let hit: Model? = state.locked { s in
            guard s.cachedGeneration == s.store.generation, let observed = s.observed else { return nil }
            s.store.registrar.access(s.store, keyPath: observed)
            return s.cached
        }
        if let hit { return hit }
        return refresh()
    }

    /// Reads through the store, decodes when the stored dictionary changed, fills the cache.
    @usableFromInline
    func refresh() -> Model {
        let (key, store) = state.locked { ($0.key, $0.store) }
        let generation = store.generation
        let raw = store.value(for: key)
        let observed = state.locked { $0.observed } ?? store.observationKeyPath(for: key)
        let known: Model? = state.locked { s in s.cachedRaw == raw && s.store === store ? s.cached : nil }
        let model: Model
        var memory: ModelArchive<Model>.Memory?
        if let known {
            model = known
        } else if let raw {
            (model, memory) = load(raw, key: key)
        } else {
            model = defaultValue
        }
        state.locked { s in
            guard s.store === store else { return }
            s.cached = model
            s.cachedRaw = raw
            s.cachedGeneration = generation
            s.observed = observed
            if known == nil { s.memory = memory }
        }
        store.registrar.access(store, keyPath: observed)
        return model
    }

    /// Decodes a stored value (reporting problems), without touching the cache.
    func decode(_ raw: PlistValue) -> Model {
        load(raw, key: modelKey).0
    }

    private func load(_ raw: PlistValue, key: SettingsKey) -> (Model, ModelArchive<Model>.Memory?) {
        guard case .dictionary(let stored) = raw else {
            SettingsDiagnostics.report(SettingsDiagnostic(
                .typeMismatch, key: key, "key '\(key.path)' holds \(raw.typeNameWithArticle), expected a dict for \(Model.self); using the default"))
            return (defaultValue, nil)
        }
        do {
            let (model, memory) = try ModelArchive<Model>.load(stored, source: "key '\(key.path)'")
            return (model, memory)
        } catch {
            SettingsDiagnostics.report(SettingsDiagnostic(.typeMismatch, key: key, "\(error); using the default"))
            return (defaultValue, nil)
        }
    }

    /// Encodes `model` once (keeping unknown keys and undecodable fields of what is stored) and
    /// writes it to the user layer.
    @usableFromInline
    func write(_ model: Model) {
        let (key, store, memory) = state.locked { ($0.key, $0.store, $0.memory) }
        let existing = store.value(for: key, in: .user)?.dictionaryValue
        let dictionary: PlistDictionary
        do {
            dictionary = try ModelArchive<Model>.save(model, over: existing, memory: memory)
        } catch {
            SettingsDiagnostics.report(SettingsDiagnostic(.typeMismatch, key: key, "\(error); the model was not written"))
            return
        }
        let raw = PlistValue.dictionary(dictionary)
        store.set(raw, for: key)
        // The next read finds this dictionary and skips decoding.
        state.locked { s in
            guard s.store === store else { return }
            s.cached = model
            s.cachedRaw = store.value(for: key)
        }
    }
}

extension StoredModel: SettingRepresentable {
    var settingBox: any AnySettingBox { box }
}
