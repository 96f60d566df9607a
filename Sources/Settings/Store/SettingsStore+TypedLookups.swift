#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import SettingsPlist
import Synchronization

// TFOptionsKit's options API: typed look-ups with a default, throwing ones without, namespaces,
// and typed keys for `store[.timeout]`.

nonisolated extension SettingsStore {
    /// An in-memory store whose registered defaults come from an options plist (a plain dictionary
    /// or a `Settings.bundle` pane), with override files laid over them in order.
    ///
    /// ```swift
    /// let options = try SettingsStore.options(contentsOf: optionsURL, overrides: [stagingURL])
    /// let host: String = try options.requiredValue(at: "API", "host")
    /// ```
    ///
    /// - Parameters:
    ///   - url: the options file.
    ///   - overrides: override files, each merged deeply over the ones before.
    /// - Returns: the store; writes to it stay in memory.
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/missingFile`` or
    ///   ``SettingsError/Code/invalidFile`` naming the first file that failed.
    public static func options(contentsOf url: URL, overrides: [URL] = []) throws(SettingsError) -> SettingsStore {
        let store = SettingsStore.inMemory()
        try store.registerDefaults(contentsOf: url)
        for overrideURL in overrides {
            try store.loadOverrides(contentsOf: overrideURL)
        }
        return store
    }

    // MARK: Look-ups with a default

    /// The value for `key` as a `Value`, or `defaultValue` when no layer has one.
    ///
    /// A stored value of another type also gives `defaultValue`, and a
    /// ``SettingsDiagnostic/Kind/typeMismatch`` diagnostic naming the key, both types and the layer.
    ///
    /// ```swift
    /// let timeout = store.value("Network/timeout", default: 30.0)
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path.
    ///   - defaultValue: the value when there is none, or none of the right type.
    public func value<Value: SettingsValue>(_ key: SettingsKey, default defaultValue: Value) -> Value {
        do {
            return try decodedValue(for: key, as: Value.self) ?? defaultValue
        } catch {
            report(SettingsDiagnostic(.typeMismatch, key: key, error.description + "; using the default"))
            return defaultValue
        }
    }

    /// The value for `key` inside `namespace` (TFOptionsKit's `Root/Sub` namespaces), or
    /// `defaultValue`; see ``value(_:default:)``.
    ///
    /// ```swift
    /// let host = store.value(at: "Network/Proxy", "host", default: "localhost")
    /// ```
    ///
    /// - Parameters:
    ///   - namespace: the dictionary's key path, or `nil` for the top level.
    ///   - key: the key inside it, taken literally (a `/` in it is part of the key).
    ///   - defaultValue: the value when there is none, or none of the right type.
    public func value<Value: SettingsValue>(at namespace: SettingsKey?, _ key: String, default defaultValue: Value) -> Value {
        value(Self.key(key, in: namespace), default: defaultValue)
    }

    // MARK: Look-ups without a default

    /// The value for `key` as a `Value`; throws when there is none.
    ///
    /// ```swift
    /// let port = try store.requiredValue(for: "Server/port", as: Int.self)
    /// // no value for key 'Server/port' (namespace 'Server' has no key 'port')
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path.
    ///   - type: the type wanted (inferred from the context when omitted).
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/missingKey`` saying which part of the
    ///   path exists, or ``SettingsError/Code/typeMismatch`` naming both types and the layer.
    public func requiredValue<Value: SettingsValue>(for key: SettingsKey, as type: Value.Type = Value.self) throws(SettingsError) -> Value {
        guard let value = try decodedValue(for: key, as: type) else { throw missingKeyError(for: key) }
        return value
    }

    /// The value for `key` inside `namespace`; throws when there is none. See ``requiredValue(for:as:)``.
    ///
    /// ```swift
    /// let key: String = try store.requiredValue(at: "Root/Sub", "Key")
    /// // no value for key 'Root/Sub/Key' (namespace 'Root' has no dictionary 'Sub')
    /// ```
    ///
    /// - Parameters:
    ///   - namespace: the dictionary's key path, or `nil` for the top level.
    ///   - key: the key inside it, taken literally.
    ///   - type: the type wanted (inferred from the context when omitted).
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/missingKey`` or
    ///   ``SettingsError/Code/typeMismatch``.
    public func requiredValue<Value: SettingsValue>(
        at namespace: SettingsKey?, _ key: String, as type: Value.Type = Value.self
    ) throws(SettingsError) -> Value {
        try requiredValue(for: Self.key(key, in: namespace), as: type)
    }

    // MARK: Helpers

    /// `key` inside `namespace`, or at the top level.
    static func key(_ key: String, in namespace: SettingsKey?) -> SettingsKey {
        namespace?.appending(key) ?? SettingsKey(components: [key])
    }

    /// The transformer for `Value`: a registered one, else the type's own.
    static func transformer<Value: SettingsValue>(for type: Value.Type) -> SettingsTransformer<Value> {
        SettingsTransformers.registered(for: type) ?? Value.settingsTransformer
    }

    /// The decoded value for `key`, or `nil` when no layer has one.
    ///
    /// - Throws: ``SettingsError/Code/typeMismatch`` when the value does not decode as `Value`.
    func decodedValue<Value: SettingsValue>(for key: SettingsKey, as type: Value.Type) throws(SettingsError) -> Value? {
        guard let resolved = withState({ $0.resolve(key) }) else { return nil }
        return try Self.transformer(for: type).decode(resolved.value, key: key, source: resolved.layer)
    }

    /// A ``SettingsError/Code/missingKey`` error for `key` saying how far its path exists.
    func missingKeyError(for key: SettingsKey) -> SettingsError {
        let detail = withState { s in s.explainMissing(key) }
        return SettingsError(.missingKey, key: key, detail: detail)
    }
}

// MARK: - Typed keys

nonisolated extension SettingsStore {
    /// A key with its value type and default, for `store[.timeout]` (sindresorhus/Defaults style).
    ///
    /// ```swift
    /// extension SettingsStore.Key where Value == Double {
    ///     static let timeout = Self("Network/timeout", default: 30)
    /// }
    /// store[.timeout]          // 30 until set
    /// store[.timeout] = 12.5   // written to the user layer
    /// ```
    public struct Key<Value: SettingsValue & Sendable>: Sendable {
        /// The key path.
        public let key: SettingsKey
        /// The value when no layer has one (or none of the right type).
        public let defaultValue: Value
        /// The key's earlier names (see ``SettingsStore/registerRename(of:formerly:)``).
        public let formerly: [SettingsKey]

        /// Creates a typed key.
        ///
        /// ```swift
        /// static let timeout = Self("Network/timeout", formerly: ["timeout"], default: 30)
        /// ```
        ///
        /// - Parameters:
        ///   - key: the key path, e.g. `"Network/timeout"`.
        ///   - formerly: its earlier names: declared to a store the first time the key is used
        ///     with it, so a value under an old name is read and moved to `key`.
        ///   - defaultValue: the value when no layer has one.
        public init(_ key: SettingsKey, formerly: [SettingsKey] = [], default defaultValue: Value) {
            self.key = key
            self.formerly = formerly
            self.defaultValue = defaultValue
        }
    }

    /// The value for a typed key: the effective value, or the key's default when there is none
    /// (or it has the wrong type, which is reported). Setting writes the user layer.
    ///
    /// ```swift
    /// store[.timeout] += 5
    /// ```
    public subscript<Value>(key: Key<Value>) -> Value {
        get {
            if !key.formerly.isEmpty { registerRename(of: key.key, formerly: key.formerly) }
            return value(key.key, default: key.defaultValue)
        }
        set {
            if !key.formerly.isEmpty { registerRename(of: key.key, formerly: key.formerly) }
            let transformer = Self.transformer(for: Value.self)
            do {
                change(.user, key: key.key, to: try transformer.encode(newValue))  // a locked key: reported
            } catch {
                report(SettingsDiagnostic(
                    .typeMismatch, key: key.key,
                    "cannot store a \(transformer.typeName) under '\(key.key.path)': \(error); the value was not written"))
            }
        }
    }
}
