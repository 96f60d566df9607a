import SettingsPlist

extension Bool: SettingsValue {
    /// Stored as `<true/>` / `<false/>`.
    public static var settingsTransformer: SettingsTransformer<Bool> {
        SettingsTransformer(typeName: "Bool", encode: { .bool($0) }, decode: { $0.boolValue })
    }
}

extension String: SettingsValue {
    /// Stored as `<string>`.
    public static var settingsTransformer: SettingsTransformer<String> {
        SettingsTransformer(typeName: "String", encode: { .string($0) }, decode: { $0.stringValue })
    }
}

extension Double: SettingsValue {
    /// Stored as `<real>`; an `<integer>` reads as its nearest Double.
    public static var settingsTransformer: SettingsTransformer<Double> {
        SettingsTransformer(typeName: "Double", encode: { .real($0) }, decode: { $0.doubleValue })
    }
}

extension Int: SettingsValue {
    /// Stored as `<integer>`; a value that does not fit in `Int` is a type mismatch.
    public static var settingsTransformer: SettingsTransformer<Int> {
        SettingsTransformer(typeName: "Int", encode: { .integer(PlistInteger(Int64($0))) }, decode: { $0.intValue })
    }
}
