import SettingsPlist
import Synchronization
import Observation

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
    @usableFromInline let box: SettingBox<Model>

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
    ///   - formerly: the key's earlier names: when `key` has no value, the model under the first
    ///     of them is read and moved to `key` (see ``SettingsStore/registerRename(of:formerly:)``).
    ///   - defaultValue: the model when the store has none (default: `Model()`).
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - title: a short human title, for schemas and generated editors.
    ///   - help: what the model holds, in a sentence or two (the schema's `description`).
    public init(
        _ key: SettingsKey, formerly: [SettingsKey] = [], default defaultValue: Model = Model(), store: SettingsStore = .shared,
        title: String? = nil, help: String? = nil
    ) {
        box = SettingBox(
            key: key, store: store, conversion: StoredModelConversion.make(defaultValue: defaultValue),
            hasDefaultInCode: true, warnsWhenDefaultIsMissing: false, takesDerivedKey: false, declaredAt: "\(key.path)",
            formerly: formerly, texts: SettingTexts(title: title, help: help))
    }

    /// The key the model is stored under.
    public var key: SettingsKey { box.key ?? SettingsKey(components: []) }

    /// The store the model lives in.
    public var store: SettingsStore { box.store }

    /// Whether the user layer holds the model.
    public var isSet: Bool { box.store.value(for: key, in: .user) != nil }

    /// Whether the model may be changed: `false` when an administrator locked its key or a
    /// field under it (see ``Setting/isWritable``); a refused save reports a
    /// ``SettingsDiagnostic/Kind/writeRefused`` diagnostic and changes nothing.
    public var isWritable: Bool {
        _ = box.read()  // the Observation framework hears of the key
        return box.store.isWritable(key)
    }

    /// Removes the stored model, so the default shows again.
    public func reset() { box.store.removeValue(for: key) }

    /// Calls `handler` with the new and old model whenever the stored model changes, from any
    /// source (see ``Setting/onChange(_:)``).
    ///
    /// - Parameter handler: the new model, then the old one.
    /// - Returns: the observation: keep it to keep receiving changes.
    public func onChange(_ handler: @escaping @Sendable (_ newValue: Model, _ oldValue: Model) -> Void) -> SettingsObservation {
        box.observe(handler)
    }

    /// The model's values as an asynchronous sequence: the current one first (unless `initial`
    /// is `false`), then each new one.
    ///
    /// - Parameter initial: whether the sequence starts with the current model.
    public func values(initial: Bool = true) -> AsyncStream<Model> {
        let box = self.box
        return AsyncStream { continuation in
            let observation = box.observe { new, _ in continuation.yield(new) }
            if initial { continuation.yield(box.read()) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }
}

/// How a `@StoredModel` converts: through the model archive, remembering what the last load of
/// the current value learnt (unknown keys, fields that did not decode) so a save keeps it.
enum StoredModelConversion<Model: SettingsModel> {
    static func make(defaultValue: Model) -> SettingBox<Model>.Conversion {
        let memory = Mutex<ModelArchive<Model>.Memory?>(nil)
        return SettingBox<Model>.Conversion(
            read: { raw, context in
                guard let raw else { return defaultValue }
                let (model, learnt) = load(raw, context: context, defaultValue: defaultValue)
                if context.isCurrent { memory.locked { $0 = learnt } }
                return model
            },
            write: { model, context in
                let existing = context.store.value(for: context.key, in: .user)?.dictionaryValue
                do {
                    return .some(.dictionary(try ModelArchive<Model>.save(model, over: existing, memory: memory.locked { $0 }, source: "key '\(context.key.path)'")))
                } catch {
                    context.store.report(SettingsDiagnostic(.typeMismatch, key: context.key, "\(error); the model was not written"))
                    return nil
                }
            },
            typeName: { "\(Model.self)" },
            reusesUnchangedStoredValue: true,
            facts: {
                var facts = SettingFacts()
                facts.typeName = "\(Model.self)"
                facts.defaultValue = (try? ModelArchive<Model>.save(defaultValue, over: nil, memory: nil, source: "the default"))
                    .map(PlistValue.dictionary)
                return facts
            }
        )
    }

    private static func load(
        _ raw: PlistValue, context: SettingBox<Model>.Context, defaultValue: Model
    ) -> (Model, ModelArchive<Model>.Memory?) {
        let key = context.key
        guard case .dictionary(let stored) = raw else {
            context.store.report(SettingsDiagnostic(
                .typeMismatch, key: key, "key '\(key.path)' holds \(raw.typeNameWithArticle), expected a dict for \(Model.self); using the default"))
            return (defaultValue, nil)
        }
        do {
            let (model, memory) = try ModelArchive<Model>.load(stored, source: "key '\(key.path)'")
            return (model, memory)
        } catch {
            context.store.report(SettingsDiagnostic(.typeMismatch, key: key, "\(error); using the default"))
            return (defaultValue, nil)
        }
    }
}

extension StoredModel: SettingRepresentable {
    var settingBox: any AnySettingBox { box }
}
