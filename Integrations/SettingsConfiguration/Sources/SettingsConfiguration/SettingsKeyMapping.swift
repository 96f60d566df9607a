public import Configuration
public import Settings

/// How swift-configuration's keys (`AbsoluteConfigKey`: components, written dot-joined as
/// `http.server.port`) and a store's keys (``SettingsKey`` paths, `http/server/port`) map to
/// each other: one store key per configuration key, and back.
///
/// The same mapping serves both directions, so they agree: ``SettingsProvider`` reads the
/// configuration key `http.port` at the store key ``storeKey`` gives (`http/port`), and a
/// provider added to a store with ``SettingsStore/addProvider(_:placement:keyMapping:name:)``
/// answers at that same store key, so `store.source(of: "http/port")` names the layer a
/// `ConfigReader` read.
///
/// ```swift
/// let provider = SettingsProvider(store: store)                                   // log.level -> log/level
/// let flat = SettingsProvider(store: store, keyMapping: .dotted)                  // log.level -> "log.level"
/// let scoped = SettingsProvider(store: store, keyMapping: .namespace("Server"))   // port -> Server/port
/// let upper = SettingsKeyMapping(
///     storeKey: { SettingsKey(components: $0.components.map { $0.uppercased() }) },
///     configKey: { AbsoluteConfigKey($0.components.map { $0.lowercased() }) })
/// ```
public struct SettingsKeyMapping: Sendable {
    /// The store key a configuration key is stored at. A provider works it out once per
    /// configuration key: return the same key every time.
    public let storeKey: @Sendable (AbsoluteConfigKey) -> SettingsKey
    /// The configuration key a store key is read at, or `nil` for a store key no configuration
    /// key maps to (outside a ``namespace(_:)``, say). The inverse of ``storeKey``: for every
    /// configuration key `k`, `configKey(storeKey(k))` is `k`.
    public let configKey: @Sendable (SettingsKey) -> AbsoluteConfigKey?

    /// A mapping, given as both of its directions.
    ///
    /// - Parameters:
    ///   - storeKey: the store key a configuration key is stored at.
    ///   - configKey: the configuration key a store key is read at (`nil`: none), the inverse of
    ///     `storeKey`.
    public init(
        storeKey: @escaping @Sendable (AbsoluteConfigKey) -> SettingsKey,
        configKey: @escaping @Sendable (SettingsKey) -> AbsoluteConfigKey?
    ) {
        self.storeKey = storeKey
        self.configKey = configKey
    }

    /// Components to components: `log.level` is `level` inside the store's `log` dictionary (as
    /// swift-configuration's JSON and property-list providers read nested objects, and as
    /// `settings write MyApp log/level debug` writes it).
    public static let standard = SettingsKeyMapping(
        storeKey: { SettingsKey(components: $0.components) },
        configKey: { AbsoluteConfigKey($0.components) })

    /// Every configuration key as one top-level store key named with its dots: `log.level` is the
    /// key `log.level` (what `settings write MyApp log.level debug` writes, the tool separating
    /// key paths with `/`). A nested store key maps to no configuration key.
    public static let dotted = SettingsKeyMapping(
        storeKey: { SettingsKey(components: [$0.components.joined(separator: ".")]) },
        configKey: { key in
            guard key.isTopLevel else { return nil }
            return AbsoluteConfigKey(key.components[0].split(separator: ".", omittingEmptySubsequences: false).map(String.init))
        })

    /// Every configuration key inside one namespace of the store: with `"Server"`, `port` is
    /// `Server/port`; a store key outside `Server` maps to no configuration key.
    ///
    /// - Parameter namespace: the store's dictionary that holds the configuration.
    public static func namespace(_ namespace: SettingsKey) -> SettingsKeyMapping {
        let prefix = namespace.components
        return SettingsKeyMapping(
            storeKey: { SettingsKey(components: prefix + $0.components) },
            configKey: { key in
                guard key.components.count > prefix.count, key.components.starts(with: prefix) else { return nil }
                return AbsoluteConfigKey(Array(key.components.dropFirst(prefix.count)))
            })
    }
}
