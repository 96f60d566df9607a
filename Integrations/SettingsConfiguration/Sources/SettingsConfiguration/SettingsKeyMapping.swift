public import Configuration
public import Settings

/// How swift-configuration's keys (`AbsoluteConfigKey`: components, written dot-joined as
/// `http.server.port`) and a store's keys (``SettingsKey`` paths, `http/server/port`) map to
/// each other, in both directions.
///
/// The ``standard`` mapping takes a configuration key's components as the store's key path
/// components: `log.level` is `level` inside the `log` dictionary, as swift-configuration's JSON
/// and property-list providers read nested objects. When that path has no value it also looks at
/// a top-level key named with the dots, `log.level` (what `settings write MyApp log.level debug`
/// writes: the tool's key paths are separated by `/`).
///
/// ```swift
/// let provider = SettingsProvider(store: store)                                   // .standard
/// let scoped = SettingsProvider(store: store, keyMapping: .namespace("Server"))   // port -> Server/port
/// let custom = SettingsProvider(store: store, keyMapping: SettingsKeyMapping { key in
///     [SettingsKey(components: key.components.map { $0.uppercased() })]
/// })
/// ```
public struct SettingsKeyMapping: Sendable {
    /// The store keys a configuration key may be stored at, the first that has a value winning.
    /// A provider works them out once per configuration key: return the same keys every time.
    public let storeKeys: @Sendable (AbsoluteConfigKey) -> [SettingsKey]
    /// The configuration key a store key is read at, for store layers that come from a provider.
    public let configKey: @Sendable (SettingsKey) -> AbsoluteConfigKey

    /// A mapping.
    ///
    /// - Parameters:
    ///   - storeKeys: the store keys a configuration key may be stored at, tried in order (return
    ///     a key made with ``SettingsKey/secret(_:)`` to have its values treated as secret).
    ///   - configKey: the configuration key a store key is read at (default: the same components).
    public init(
        storeKeys: @escaping @Sendable (AbsoluteConfigKey) -> [SettingsKey],
        configKey: @escaping @Sendable (SettingsKey) -> AbsoluteConfigKey = { AbsoluteConfigKey($0.components) }
    ) {
        self.storeKeys = storeKeys
        self.configKey = configKey
    }

    /// Components to components (`log.level` is `log/level`), then the dot-joined key at the top
    /// level (`log.level` as one key).
    public static let standard = SettingsKeyMapping(storeKeys: { key in
        let nested = SettingsKey(components: key.components)
        guard key.components.count > 1 else { return [nested] }
        return [nested, SettingsKey(components: [key.components.joined(separator: ".")])]
    })

    /// Components to components only.
    public static let nested = SettingsKeyMapping(storeKeys: { key in [SettingsKey(components: key.components)] })

    /// Every configuration key inside one namespace of the store: with `"Server"`, `port` is
    /// `Server/port`.
    ///
    /// - Parameter namespace: the store's dictionary that holds the configuration.
    public static func namespace(_ namespace: SettingsKey) -> SettingsKeyMapping {
        SettingsKeyMapping(
            storeKeys: { key in [SettingsKey(components: namespace.components + key.components)] },
            configKey: { key in
                let inside = key.components.starts(with: namespace.components)
                return AbsoluteConfigKey(inside ? Array(key.components.dropFirst(namespace.components.count)) : key.components)
            })
    }
}
