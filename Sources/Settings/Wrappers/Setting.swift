import SettingsPlist

/// A typed setting stored in a ``SettingsStore``, usable on `struct` and class properties.
///
/// ```swift
/// struct AppSettings {
///     @Setting("autoPlay", default: false) var autoPlay: Bool
///     @Setting("Network/timeout", default: 30.0) var timeout: Double
///     @Setting("username") var username: String?          // no default: nil when unset
///     @Setting(default: true) var launchAtStartup: Bool    // key "LaunchAtStartup", once bound
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

    /// Removes the user's value, so the layers below (or the default in code) show again.
    public func reset() {
        guard let key = box.key else { return }
        box.store.removeValue(for: key)
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
    ///     name (first letter capitalised) when the container is bound with ``SettingsStore/bind(_:)``.
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value, instead of the type's own or a registered one.
    @inlinable
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        fileID: String = #fileID, line: Int = #line
    ) where Value: SettingsValue {
        self.init(key, default: defaultValue, store: store, rules: rules,
                  transformer: transformer ?? Value.settingsTransformer, explicit: transformer != nil,
                  declaredAt: "\(fileID):\(line)")
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
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value.
    @inlinable
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>,
        fileID: String = #fileID, line: Int = #line
    ) {
        self.init(key, default: defaultValue, store: store, rules: rules, transformer: transformer, explicit: true,
                  declaredAt: "\(fileID):\(line)")
    }

    /// An optional setting of any type, stored through the transformer you give.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value.
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    @inlinable
    public init<Wrapped: Sendable>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, rules: SettingRules<Wrapped> = .init(),
        transformer: SettingsTransformer<Wrapped>, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped? {
        self.init(optional: key, store: store, rules: rules, transformer: transformer, explicit: true,
                  warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)")
    }

    /// The designated path every non-optional form goes through.
    @inlinable
    init(
        _ key: SettingsKey?, default defaultValue: Value, store: SettingsStore, rules: SettingRules<Value>,
        transformer: SettingsTransformer<Value>, explicit: Bool, declaredAt: String
    ) {
        self.init(box: SettingBox<Value>(
            key: key, store: store, transformer: transformer, explicit: explicit, rules: rules,
            hasDefaultInCode: true, warnsWhenDefaultIsMissing: false, declaredAt: declaredAt,
            wrap: { $0 ?? defaultValue }, unwrap: { $0 }))
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
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write (`whenNil(use:)` supplies a value for `nil`).
    ///   - transformer: how to store the value.
    ///   - warnsWhenDefaultIsMissing: whether `registerDefaults(..., checking:)` warns when no
    ///     default is registered for this setting (MFDynamic's per-property opt-out).
    @inlinable
    public init<Wrapped: SettingsValue>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, rules: SettingRules<Wrapped> = .init(),
        transformer: SettingsTransformer<Wrapped>? = nil, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped? {
        self.init(optional: key, store: store, rules: rules, transformer: transformer ?? Wrapped.settingsTransformer,
                  explicit: transformer != nil, warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)")
    }

    /// The designated path every optional form goes through.
    @inlinable
    init<Wrapped: Sendable>(
        optional key: SettingsKey?, store: SettingsStore, rules: SettingRules<Wrapped>,
        transformer: SettingsTransformer<Wrapped>, explicit: Bool, warns: Bool, declaredAt: String
    ) where Value == Wrapped? {
        self.init(box: SettingBox<Value>(
            key: key, store: store, transformer: transformer, explicit: explicit, rules: rules,
            hasDefaultInCode: false, warnsWhenDefaultIsMissing: warns, declaredAt: declaredAt,
            wrap: { $0 }, unwrap: { $0 }))
    }
}

/// A setting with no setter at all: for options that come from defaults and override files
/// (MFDynamic's `readonly` properties, TFOptionsKit's options).
///
/// ```swift
/// struct Options {
///     @ReadOnlySetting("API/baseURL", default: "https://example.com") var baseURL: String
/// }
/// ```
@propertyWrapper
public struct ReadOnlySetting<Value: Sendable>: Sendable {
    @usableFromInline let setting: Setting<Value>

    /// The current value.
    @inlinable public var wrappedValue: Value { setting.wrappedValue }

    /// `$option`: the key and where the value comes from.
    public var projectedValue: ReadOnlySetting<Value> { self }

    /// The key, or `nil` for a key-less setting not yet bound.
    public var key: SettingsKey? { setting.key }

    /// The layer the current value comes from; `nil` when only the default in code applies.
    public var source: SettingsLayer? { setting.source }

    /// A read-only setting with a default in code.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read.
    ///   - transformer: how the value is stored.
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        fileID: String = #fileID, line: Int = #line
    ) where Value: SettingsValue {
        setting = Setting(key, default: defaultValue, store: store, rules: rules, transformer: transformer, fileID: fileID, line: line)
    }

    /// A read-only optional setting: `nil` when no layer has a value.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    public init<Wrapped: SettingsValue>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped? {
        setting = Setting(key, store: store, warnsWhenDefaultIsMissing: warnsWhenDefaultIsMissing, fileID: fileID, line: line)
    }
}
