// `@Setting` and `@ReadOnlySetting` for types that are not `SettingsValue`s, with no boilerplate:
//
// - an enum with raw values is stored as its raw value (``SettingsTransformer/rawValue``);
// - any other `Codable` type as a nested plist value (``SettingsTransformer/codable``).
//
// These initialisers are `@_disfavoredOverload`, so a type that is a `SettingsValue` (`String` is
// also `Codable`) keeps its own transformer. An
// enum that is both `RawRepresentable` and `Codable` (`enum Theme: String, Codable`) would match
// two of them; the third form, constrained to both, is more specific and wins, so such an enum
// is stored as its raw value either way.

extension Setting {
    /// A setting for an enum with raw values, stored as its raw value.
    ///
    /// ```swift
    /// enum Theme: String { case light, dark }
    /// @Setting("theme", default: Theme.dark) var theme: Theme   // <string>dark</string>
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - defaultValue: the value when no layer has one (or the stored raw value names no case).
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value instead of its raw value or a registered one.
    @_disfavoredOverload
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        fileID: String = #fileID, line: Int = #line
    ) where Value: RawRepresentable, Value.RawValue: SettingsValue & Sendable {
        self.init(key, default: defaultValue, store: store, rules: rules, transformer: transformer ?? .rawValue,
                  explicit: transformer != nil, declaredAt: "\(fileID):\(line)")
    }

    /// A setting for a `Codable` type, stored as a nested plist value (a struct as a `<dict>`).
    ///
    /// ```swift
    /// struct Profile: Codable, Sendable { var name = "Ada"; var age = 36 }
    /// @Setting("profile", default: Profile()) var profile: Profile
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - defaultValue: the value when no layer has one (or the stored one does not decode).
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value instead of through ``PlistEncoder`` or a registered one.
    @_disfavoredOverload
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        fileID: String = #fileID, line: Int = #line
    ) where Value: Codable {
        self.init(key, default: defaultValue, store: store, rules: rules, transformer: transformer ?? .codable,
                  explicit: transformer != nil, declaredAt: "\(fileID):\(line)")
    }

    /// A setting for an enum that has raw values and is `Codable`: stored as its raw value.
    ///
    /// ```swift
    /// enum Theme: String, Codable { case light, dark }
    /// @Setting("theme", default: Theme.dark) var theme: Theme   // <string>dark</string>
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value instead of its raw value or a registered one.
    @_disfavoredOverload
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        fileID: String = #fileID, line: Int = #line
    ) where Value: RawRepresentable & Codable, Value.RawValue: SettingsValue & Sendable {
        self.init(key, default: defaultValue, store: store, rules: rules, transformer: transformer ?? .rawValue,
                  explicit: transformer != nil, declaredAt: "\(fileID):\(line)")
    }

    /// An optional setting for an enum with raw values: `nil` when no layer has a value.
    ///
    /// ```swift
    /// @Setting("lastTheme") var lastTheme: Theme?
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value.
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    @_disfavoredOverload
    public init<Wrapped: RawRepresentable>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, rules: SettingRules<Wrapped> = .init(),
        transformer: SettingsTransformer<Wrapped>? = nil, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped?, Wrapped.RawValue: SettingsValue & Sendable {
        self.init(optional: key, store: store, rules: rules, transformer: transformer ?? .rawValue,
                  explicit: transformer != nil, warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)")
    }

    /// An optional setting for a `Codable` type: `nil` when no layer has a value.
    ///
    /// ```swift
    /// @Setting("savedProfile") var savedProfile: Profile?
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value.
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    @_disfavoredOverload
    public init<Wrapped: Codable>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, rules: SettingRules<Wrapped> = .init(),
        transformer: SettingsTransformer<Wrapped>? = nil, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped? {
        self.init(optional: key, store: store, rules: rules, transformer: transformer ?? .codable,
                  explicit: transformer != nil, warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)")
    }

    /// An optional setting for a `Codable` enum with raw values: stored as its raw value.
    ///
    /// ```swift
    /// @Setting("lastTheme") var lastTheme: Theme?   // enum Theme: String, Codable
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read and write.
    ///   - transformer: how to store the value.
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    @_disfavoredOverload
    public init<Wrapped: RawRepresentable & Codable>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, rules: SettingRules<Wrapped> = .init(),
        transformer: SettingsTransformer<Wrapped>? = nil, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped?, Wrapped.RawValue: SettingsValue & Sendable {
        self.init(optional: key, store: store, rules: rules, transformer: transformer ?? .rawValue,
                  explicit: transformer != nil, warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)")
    }
}

extension ReadOnlySetting {
    /// A read-only setting for an enum with raw values, stored as its raw value.
    ///
    /// ```swift
    /// @ReadOnlySetting("logLevel", default: LogLevel.info) var logLevel: LogLevel
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read.
    ///   - transformer: how the value is stored.
    @_disfavoredOverload
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        fileID: String = #fileID, line: Int = #line
    ) where Value: RawRepresentable, Value.RawValue: SettingsValue & Sendable {
        setting = Setting(key, default: defaultValue, store: store, rules: rules, transformer: transformer ?? .rawValue,
                          explicit: transformer != nil, declaredAt: "\(fileID):\(line)")
    }

    /// A read-only setting for a `Codable` type, stored as a nested plist value.
    ///
    /// ```swift
    /// @ReadOnlySetting("servers", default: [Server]()) var servers: [Server]
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read.
    ///   - transformer: how the value is stored.
    @_disfavoredOverload
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        fileID: String = #fileID, line: Int = #line
    ) where Value: Codable {
        setting = Setting(key, default: defaultValue, store: store, rules: rules, transformer: transformer ?? .codable,
                          explicit: transformer != nil, declaredAt: "\(fileID):\(line)")
    }

    /// A read-only setting for a `Codable` enum with raw values: stored as its raw value.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - defaultValue: the value when no layer has one.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - rules: rules applied on read.
    ///   - transformer: how the value is stored.
    @_disfavoredOverload
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        fileID: String = #fileID, line: Int = #line
    ) where Value: RawRepresentable & Codable, Value.RawValue: SettingsValue & Sendable {
        setting = Setting(key, default: defaultValue, store: store, rules: rules, transformer: transformer ?? .rawValue,
                          explicit: transformer != nil, declaredAt: "\(fileID):\(line)")
    }

    /// A read-only optional setting for an enum with raw values: `nil` when no layer has a value.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    @_disfavoredOverload
    public init<Wrapped: RawRepresentable>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped?, Wrapped.RawValue: SettingsValue & Sendable {
        setting = Setting(optional: key, store: store, rules: SettingRules<Wrapped>(), transformer: .rawValue,
                          explicit: false, warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)")
    }

    /// A read-only optional setting for a `Codable` type: `nil` when no layer has a value.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    @_disfavoredOverload
    public init<Wrapped: Codable>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped? {
        setting = Setting(optional: key, store: store, rules: SettingRules<Wrapped>(), transformer: .codable,
                          explicit: false, warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)")
    }

    /// A read-only optional setting for a `Codable` enum with raw values: stored as its raw value.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    @_disfavoredOverload
    public init<Wrapped: RawRepresentable & Codable>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, warnsWhenDefaultIsMissing: Bool = true,
        fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped?, Wrapped.RawValue: SettingsValue & Sendable {
        setting = Setting(optional: key, store: store, rules: SettingRules<Wrapped>(), transformer: .rawValue,
                          explicit: false, warns: warnsWhenDefaultIsMissing, declaredAt: "\(fileID):\(line)")
    }
}
