import SettingsPlist
import SettingsFiles

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
    ///   - title: a short human title (a form's label), for schemas and generated editors.
    ///   - help: a sentence or two saying what the setting does (the schema's `description`).
    ///   - fileID: where the setting is declared (filled in by the compiler), named in diagnostics.
    ///   - line: the line it is declared on (filled in by the compiler).
    public init(
        _ key: SettingsKey? = nil, default defaultValue: Value, store: SettingsStore = .shared,
        rules: SettingRules<Value> = .init(), transformer: SettingsTransformer<Value>? = nil,
        title: String? = nil, help: String? = nil, fileID: String = #fileID, line: Int = #line
    ) where Value: SettingsValue {
        setting = Setting(key, default: defaultValue, store: store, rules: rules, transformer: transformer,
                          title: title, help: help, fileID: fileID, line: line)
    }

    /// A key-less read-only optional setting: `@ReadOnlySetting var apiToken: String?` (key
    /// `ApiToken` once the container is bound). See ``Setting/init()``.
    public init() {
        setting = Setting()
    }

    /// A read-only optional setting: `nil` when no layer has a value.
    ///
    /// - Parameters:
    ///   - key: the key path, or `nil` to derive it from the property name once bound.
    ///   - store: the store (default: ``SettingsStore/shared``).
    ///   - warnsWhenDefaultIsMissing: whether missing-default checks warn about it.
    ///   - title: a short human title (a form's label), for schemas and generated editors.
    ///   - help: a sentence or two saying what the setting does (the schema's `description`).
    ///   - fileID: where the setting is declared (filled in by the compiler), named in diagnostics.
    ///   - line: the line it is declared on (filled in by the compiler).
    public init<Wrapped: SettingsValue>(
        _ key: SettingsKey? = nil, store: SettingsStore = .shared, warnsWhenDefaultIsMissing: Bool = true,
        title: String? = nil, help: String? = nil, fileID: String = #fileID, line: Int = #line
    ) where Value == Wrapped? {
        setting = Setting(key, store: store, warnsWhenDefaultIsMissing: warnsWhenDefaultIsMissing,
                          title: title, help: help, fileID: fileID, line: line)
    }
}
