import SettingsPlist
public import SettingsFiles

/// A typed setting stored in a ``SettingsStore``, usable on `struct` and class properties.
///
/// ```swift
/// struct AppSettings {
///     @Setting("autoPlay", default: false) var autoPlay: Bool
///     @Setting("Network/timeout", default: 30.0) var timeout: Double
///     @Setting("username") var username: String?          // no default: nil when unset
///     @Setting(default: true) var launchAtStartup: Bool    // key "LaunchAtStartup", once bound
///     @Setting var lastUpdate: Date?                       // key "LastUpdate", once bound
/// }
/// let settings = AppSettings()
/// settings.autoPlay = true            // nonmutating: `let settings` is enough
/// settings.$timeout.source            // which layer the value comes from
/// settings.$timeout.reset()           // back to the default
/// settings.username = nil             // removes the key
/// ```
///
/// Reads are served from a cache that stays valid until the store changes; a stored value of the
/// wrong type reads as the default and reports a diagnostic naming the key, its layer and both types.
@propertyWrapper
public struct Setting<Value: Sendable>: Sendable {
    @usableFromInline let box: SettingBox<Value>

    /// The setting's value; setting it writes the user layer at once (persisted soon after).
    @inlinable public var wrappedValue: Value {
        get { box.read() }
        nonmutating set { box.write(newValue) }
    }

    /// `$setting`: the key, whether the user set it, where its value comes from, and `reset()`.
    public var projectedValue: Setting<Value> { self }

    /// The key, or `nil` for a key-less setting not yet bound.
    public var key: SettingsKey? { box.key }

    /// The store the setting reads and writes.
    public var store: SettingsStore { box.store }

    /// Whether the user layer holds a value for this setting.
    public var isSet: Bool {
        guard let key = box.key else { return false }
        return box.store.value(for: key, in: .user) != nil
    }

    /// The layer the current value comes from; `nil` when only the default in code applies.
    public var source: SettingsLayer? {
        guard let key = box.key else { return nil }
        return box.store.source(of: key)
    }

    /// Where the setting's value comes from: ``SettingsStore/explain(_:)`` for its key, with
    /// the setting's rules (applied on read and write) named; `nil` for a key-less setting not
    /// yet bound.
    ///
    /// ```swift
    /// print(settings.$timeout.explanation!)
    /// // Network/timeout = 60 (from user: /home/ada/.config/MyApp/settings.plist)
    /// // ...
    /// // rules on read: clamp(1...120)
    /// ```
    public var explanation: SettingsExplanation? {
        guard let key = box.key else { return nil }
        var explanation = box.store.explain(key)
        explanation.rules = box.ruleNames
        return explanation
    }

    /// Who last set this setting in the user's file, and when (``SettingsStore/provenance(of:)``);
    /// `nil` when the file holds no value for it. Never read on the value's read path.
    ///
    /// ```swift
    /// settings.$timeout.provenance?.summary   // "set by MyApp pid 4121 at 2026-11-26 10:15:02 UTC"
    /// ```
    public var provenance: SettingsProvenance? {
        guard let key = box.key else { return nil }
        return box.store.provenance(of: key)
    }

    /// Whether the setting may be changed: `false` when an administrator locked its key in a
    /// `locked.plist` (``SettingsStore/isWritable(_:)``; grey out its control, as apps do with
    /// `objectIsForced`). Setting a locked setting leaves its value and reports a
    /// ``SettingsDiagnostic/Kind/writeRefused`` diagnostic. Observable like the value: a lock
    /// that appears or goes is announced for the key (origin ``SettingsChange/Origin/locks``),
    /// and a view reading `isWritable` under the Observation framework is updated.
    ///
    /// ```swift
    /// toggle.isEnabled = settings.$autoUpdate.isWritable
    /// ```
    public var isWritable: Bool {
        guard let key = box.key else { return true }
        _ = box.read()  // the Observation framework hears of the key: a changed lock is announced for it
        return box.store.isWritable(key)
    }

    /// Removes the user's value, so the layers below (or the default in code) show again.
    public func reset() {
        guard let key = box.key else { return }
        box.store.removeValue(for: key)
    }

    /// A key-less optional setting with nothing else to say: `@Setting var lastUpdate: Date?`.
    ///
    /// The key is derived from the property name (`LastUpdate`) when the container is bound with
    /// ``SettingsStore/bind(_:to:)``; the store is ``SettingsStore/shared`` until then. Because this
    /// initialiser takes no arguments, the container's memberwise initialiser does not ask for the
    /// property:
    ///
    /// ```swift
    /// struct MYAppDefaults {
    ///     @Setting var lastUpdate: Date?
    /// }
    /// let defaults = SettingsStore.bind(MYAppDefaults())
    /// ```
    ///
    /// Only an optional of a ``SettingsValue`` type can be declared this way. A non-optional
    /// setting needs a default (`@Setting(default: 0) var count: Int`); declared without one, it
    /// stops the program with a message saying so when it is first read or written.
    public init() {
        // In the type's body, unconstrained: only such an `init()` lets the compiler
        // default-initialise `@Setting var name: T?`, and the compiler also evaluates it for a
        // non-optional `@Setting var name: T` whose container assigns `_name` in its own init.
        self.init(box: keylessBox(Value.self))
    }

    @inlinable init(box: SettingBox<Value>) {
        self.box = box
    }
}

extension Setting {
    /// A setting with a default value in code.
    ///
    /// - Parameters:
    ///   - key: the key path (`"Network/timeout"`); omit it to derive the key from the property
    ///     name (first letter capitalised) when the container is bound with ``SettingsStore/bind(_:to:)``.
    ///   - formerly: the key's earlier names: when `key` has no value, the first of them that
    ///     has one is read, and moved to `key` for good (see
    ///     ``SettingsStore/registerRename(of:formerly:)``).
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value, instead of the type's own or a registered one.
    ///   - title: a short human title (a form's label), for schemas and generated editors.
    ///   - help: a sentence or two saying what the setting does (the schema's `description`).
    ///   - fileID: where the setting is declared (filled in by the compiler), named in diagnostics.
    ///   - line: the line it is declared on (filled in by the compiler).
    ///
    /// ```swift
    /// @Setting("Network/timeout", formerly: ["timeout", "NetTimeout"], default: 30) var timeout: Int
    /// ```
    @inlinable
    public init(
        _ key: SettingsKey? = nil, formerly: [SettingsKey] = [], default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        title: String? = nil, help: String? = nil, fileID: String = #fileID, line: Int = #line
    ) where Value: SettingsValue {
        self.init(key, default: defaultValue, store: store, rules: rules,
                  transformer: transformer ?? Value.settingsTransformer, explicit: transformer != nil,
                  declaredAt: "\(fileID):\(line)", formerly: formerly, texts: SettingTexts(title: title, help: help))
    }

    /// A setting of any type, stored through the transformer you give (Alchemic's per-property
    /// transformers): the type needs no conformance of its own.
    ///
    /// ```swift
    /// @Setting("outside", default: Temperature(celsius: 20), transformer: .celsius) var outside: Temperature
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - formerly: the key's earlier names (see ``SettingsStore/registerRename(of:formerly:)``).
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value.
    ///   - title: a short human title (a form's label), for schemas and generated editors.
    ///   - help: a sentence or two saying what the setting does (the schema's `description`).
    ///   - fileID: where the setting is declared (filled in by the compiler), named in diagnostics.
    ///   - line: the line it is declared on (filled in by the compiler).
    @inlinable
    public init(
        _ key: SettingsKey? = nil, formerly: [SettingsKey] = [], default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>,
        title: String? = nil, help: String? = nil, fileID: String = #fileID, line: Int = #line
    ) {
        self.init(key, default: defaultValue, store: store, rules: rules, transformer: transformer, explicit: true,
                  declaredAt: "\(fileID):\(line)", formerly: formerly, texts: SettingTexts(title: title, help: help))
    }

    /// An optional setting of any type, stored through the transformer you give.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - formerly: the key's earlier names (see ``SettingsStore/registerRename(of:formerly:)``).
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value.
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    ///   - title: a short human title (a form's label), for schemas and generated editors.
    ///   - help: a sentence or two saying what the setting does (the schema's `description`).
    ///   - fileID: where the setting is declared (filled in by the compiler), named in diagnostics.
    ///   - line: the line it is declared on (filled in by the compiler).
    @inlinable
    public init<Wrapped: Sendable>(
        _ key: SettingsKey? = nil, formerly: [SettingsKey] = [], store: SettingsStore = .shared, rules: SettingRules<Wrapped> = .init(),
        transformer: SettingsTransformer<Wrapped>, warnsWhenDefaultIsMissing: Bool = true,
        title: String? = nil, help: String? = nil, fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped? {
        self.init(optional: key, store: store, rules: rules, transformer: transformer, explicit: true,
                  warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)", formerly: formerly,
                  texts: SettingTexts(title: title, help: help))
    }

    /// The designated path every non-optional form goes through.
    @inlinable
    init(
        _ key: SettingsKey?, default defaultValue: Value, store: SettingsStore, rules: SettingRules<Value>,
        transformer: SettingsTransformer<Value>, explicit: Bool, declaredAt: String, formerly: [SettingsKey] = [],
        texts: SettingTexts = SettingTexts()
    ) {
        self.init(box: SettingBox<Value>(
            key: key, store: store, transformer: transformer, explicit: explicit, rules: rules,
            hasDefaultInCode: true, warnsWhenDefaultIsMissing: false, declaredAt: declaredAt, formerly: formerly, texts: texts,
            builtIn: BuiltInScalar(Value.self), wrap: { $0 ?? defaultValue }, unwrap: { $0 }))
    }

    /// An optional setting: `nil` when no layer has a value; assigning `nil` removes the key.
    ///
    /// ```swift
    /// @Setting("lastUser") var lastUser: String?
    /// @Setting("legacyFlag", warnsWhenDefaultIsMissing: false) var legacyFlag: Bool?
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - formerly: the key's earlier names (see ``SettingsStore/registerRename(of:formerly:)``).
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write (`whenNil(use:)` supplies a value for `nil`).
    ///   - transformer: how to store the value.
    ///   - warnsWhenDefaultIsMissing: whether `registerDefaults(..., checking:)` warns when no
    ///     default is registered for this setting (MFDynamic's per-property opt-out).
    ///   - title: a short human title (a form's label), for schemas and generated editors.
    ///   - help: a sentence or two saying what the setting does (the schema's `description`).
    ///   - fileID: where the setting is declared (filled in by the compiler), named in diagnostics.
    ///   - line: the line it is declared on (filled in by the compiler).
    @inlinable
    public init<Wrapped: SettingsValue>(
        _ key: SettingsKey? = nil, formerly: [SettingsKey] = [], store: SettingsStore = .shared, rules: SettingRules<Wrapped> = .init(),
        transformer: SettingsTransformer<Wrapped>? = nil, warnsWhenDefaultIsMissing: Bool = true,
        title: String? = nil, help: String? = nil, fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped? {
        self.init(optional: key, store: store, rules: rules, transformer: transformer ?? Wrapped.settingsTransformer,
                  explicit: transformer != nil, warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)", formerly: formerly,
                  texts: SettingTexts(title: title, help: help))
    }

    /// The designated path every optional form goes through.
    @inlinable
    init<Wrapped: Sendable>(
        optional key: SettingsKey?, store: SettingsStore, rules: SettingRules<Wrapped>,
        transformer: SettingsTransformer<Wrapped>, explicit: Bool, warns: Bool, declaredAt: String, formerly: [SettingsKey] = [],
        texts: SettingTexts = SettingTexts()
    ) where Value == Wrapped? {
        self.init(box: SettingBox<Value>(
            key: key, store: store, transformer: transformer, explicit: explicit, rules: rules,
            hasDefaultInCode: false, warnsWhenDefaultIsMissing: warns, declaredAt: declaredAt, formerly: formerly, texts: texts,
            wrap: { $0 }, unwrap: { $0 }))
    }
}

/// What a key-less optional setting needs from its `Optional` type, found at run time (the
/// type is only known to be `Sendable` where ``Setting/init()`` is written).
protocol KeylessOptionalSetting {
    /// A `SettingsTransformer<Self>`: the wrapped type's (or the one registered for it).
    static var keylessTransformer: Any { get }
    /// `Self.none`.
    static var noneValue: Any { get }
}

extension Optional: KeylessOptionalSetting where Wrapped: SettingsValue {
    static var keylessTransformer: Any {
        optionalTransformer(ComponentTransformer(builtIn: Wrapped.settingsTransformer))
    }

    static var noneValue: Any { Wrapped?.none as Any }
}

/// The transformer for `Wrapped?` made from the wrapped type's. Made here, where `Wrapped` has no
/// conformances, so that its closures may be `@Sendable`.
private func optionalTransformer<Wrapped>(_ wrapped: ComponentTransformer<Wrapped>) -> SettingsTransformer<Wrapped?> {
    let current = wrapped.resolver
    return SettingsTransformer<Wrapped?>(
        typeName: wrapped.builtIn.typeName,
        encode: { value in
            guard let value else { throw TransformFailure("nil is stored by removing the key") }
            return try current().encode(value)
        },
        decode: { plist in try current().decodeValue(plist).map { .some($0) } }
    )
}

/// Whether `value` is an `Optional` holding nothing.
private func isNone(_ value: Any) -> Bool {
    let mirror = Mirror(reflecting: value)
    return mirror.displayStyle == .optional && mirror.children.isEmpty
}

/// The box behind ``Setting/init()``: a key-less optional setting, or for any other type one
/// that stops with a message when it is used.
func keylessBox<Value: Sendable>(_ type: Value.Type) -> SettingBox<Value> {
    if let optional = Value.self as? any KeylessOptionalSetting.Type,
       let transformer = optional.keylessTransformer as? SettingsTransformer<Value>,
       let none = optional.noneValue as? Value {
        return SettingBox<Value>(
            key: nil, store: .shared, transformer: transformer, explicit: true, rules: SettingRules<Value>(),
            hasDefaultInCode: false, warnsWhenDefaultIsMissing: true,
            declaredAt: "an unknown place (a key-less @Setting of type \(Value.self))",
            wrap: { $0 ?? none }, unwrap: { isNone($0) ? nil : $0 })
    }
    let problem = """
        @Setting var …: \(Value.self) has no default: declare it @Setting(default: …) or make it \
        optional (\(Value.self)?, a SettingsValue type)
        """
    return SettingBox<Value>(
        key: nil, store: .shared,
        transformer: SettingsTransformer<Value>(typeName: "\(Value.self)", encode: { _ in preconditionFailure(problem) }, decode: { _ in nil }),
        explicit: true, rules: SettingRules<Value>(), hasDefaultInCode: false, warnsWhenDefaultIsMissing: true,
        declaredAt: "an unknown place (@Setting of type \(Value.self) without a default)",
        wrap: { _ in preconditionFailure(problem) }, unwrap: { _ in preconditionFailure(problem) })
}

extension Setting: CustomStringConvertible {
    /// `Network/timeout = 30.0 (from user file)`; a secret key's value (see
    /// ``SettingsKey/isSecret``) shows as `<redacted>`.
    ///
    /// ```swift
    /// print(settings.$timeout)    // Network/timeout = 30.0 (from registered defaults)
    /// print(settings.$apiToken)   // apiToken = <redacted> (from user file)
    /// ```
    public var description: String {
        guard let key else { return "@Setting (key-less, not bound)" }
        let value = key.isSecret ? SettingsSecrets.redactedText : String(describing: wrappedValue)
        return "\(key.path) = \(value) (from \(source?.name ?? "the default in code"))"
    }
}

extension ReadOnlySetting: CustomStringConvertible {
    /// As ``Setting/description``: `API/baseURL = https://example.com (from override file)`.
    public var description: String { setting.description }
}
