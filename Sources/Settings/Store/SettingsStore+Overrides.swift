#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

nonisolated extension SettingsStore {
    /// Lays the plist file at `url` over the override layer (TFOptionsKit's target-specific
    /// options): merged deeply, so a nested dictionary in the file replaces only the keys it names,
    /// and a file loaded later wins over one loaded earlier. Override values are read-only: they
    /// hide the user's and the registered values until the process ends.
    ///
    /// ```swift
    /// try store.registerDefaults(contentsOf: optionsURL)             // ["API": ["host": "example.com", "port": 443]]
    /// try store.loadOverrides(contentsOf: stagingURL)                // ["API": ["host": "staging.example.com"]]
    /// store["API/host"]                                              // "staging.example.com"
    /// store["API/port"]                                              // 443, still from the defaults
    /// store.source(of: "API/host")                                   // .overrides
    /// ```
    ///
    /// - Parameter url: the override file, XML or binary, whose root is a dictionary.
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/missingFile`` when the file does not
    ///   exist, ``SettingsError/Code/invalidFile`` when it cannot be read or parsed (the
    ///   `PlistError` with its position inside) or its root is not a dictionary. Nothing is
    ///   changed then.
    public func loadOverrides(contentsOf url: URL) throws(SettingsError) {
        addOverrides(try Self.readDictionary(at: url), path: url.path)
    }
}
