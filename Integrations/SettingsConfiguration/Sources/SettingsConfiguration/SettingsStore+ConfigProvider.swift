public import Configuration
public import Settings
import SettingsPlist
import Synchronization

extension SettingsStore {
    /// Reads any swift-configuration `ConfigProvider` as a read-only layer of the store.
    ///
    /// `@Setting` reads see the provider's values where it sits (environment variables and the
    /// command line above the user's file, a shipped YAML file below it, say); ``source(of:)``
    /// names it, `.provider("EnvironmentVariablesProvider")`; and every snapshot its
    /// `watchSnapshot` delivers reaches the store's observers like any other change (origin
    /// ``SettingsChange/Origin/provider``). Writes still go to the user's file.
    ///
    /// ```swift
    /// let store = SettingsStore.shared
    /// store.addProvider(EnvironmentVariablesProvider(), placement: .above(.user))
    /// store.addProvider(try await FileProvider<JSONSnapshot>(filePath: "/etc/myapp.json"), placement: .below(.user))
    /// store.source(of: "http/port")        // .provider("EnvironmentVariablesProvider") when HTTP_PORT is set
    /// ```
    ///
    /// A provider is asked for the type of the value the layers below hold at the key (a
    /// registered default, say); where they hold none, text (from environment variables or
    /// arguments) is typed as the store types `-key value` arguments: `8080` is an integer,
    /// `YES` a boolean, anything else a string. The provider is watched for as long as the store
    /// lives, or until ``removeExternalLayer(named:)``.
    ///
    /// - Parameters:
    ///   - provider: the provider.
    ///   - placement: where it sits among the built-in layers.
    ///   - keyMapping: how the store's keys map to the provider's (default: component for
    ///     component, `Network/timeout` is `Network.timeout`): the layer answers at the store key
    ///     the mapping gives, the key a ``SettingsProvider`` with the same mapping reads.
    ///   - name: the layer's name (default: the provider's `providerName`).
    /// - Returns: `false` (and nothing changes) when the store already has a layer of that name.
    @discardableResult
    public nonisolated func addProvider(
        _ provider: some ConfigProvider, placement: SettingsLayerPlacement,
        keyMapping: SettingsKeyMapping = .standard, name: String? = nil
    ) -> Bool {
        let name = name ?? provider.providerName
        let watch = ProviderWatch()
        let lookup = ProviderWatch.lookup(in: provider.snapshot(), keyMapping: keyMapping, keepingAlive: watch)
        guard addExternalLayer(named: name, placement: placement, lookup: lookup) else { return false }
        watch.start { [weak self] in
            try await provider.watchSnapshot { updates in
                for await snapshot in updates {
                    guard let store = self else { return }
                    store.updateExternalLayer(
                        named: name, lookup: ProviderWatch.lookup(in: snapshot, keyMapping: keyMapping, keepingAlive: watch))
                }
            }
        }
        return true
    }
}

/// The task that follows a provider's snapshots for a store. Its lookups keep it alive: when the
/// store goes (or the layer is removed), the last lookup goes, and the task is cancelled.
final class ProviderWatch: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    deinit { task.withLock { $0?.cancel() } }

    /// Starts following the provider (once). A provider whose watch fails stays at its last snapshot.
    func start(_ body: @escaping @Sendable () async throws -> Void) {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { try? await body() }
        }
    }

    /// The store lookup that reads `snapshot` (see ``SettingsStore/addProvider(_:placement:keyMapping:name:)``).
    static func lookup(
        in snapshot: any ConfigSnapshot, keyMapping: SettingsKeyMapping, keepingAlive watch: ProviderWatch
    ) -> @Sendable (SettingsKey, PlistValue?) -> PlistValue? {
        { key, hint in
            _ = watch
            guard let configKey = keyMapping.configKey(key) else { return nil }
            return value(in: snapshot, at: configKey, hint: hint)
        }
    }

    /// The types tried, in order, for a key whose type nothing hints at and that is not text.
    static let untypedOrder: [ConfigType] = [.int, .double, .bool, .bytes, .stringArray, .intArray, .doubleArray, .boolArray, .byteChunkArray]

    /// The value `snapshot` has at `key`: of the hinted type when it has one of that type, else
    /// text typed as the store types arguments, else the first type it converts to.
    static func value(in snapshot: any ConfigSnapshot, at key: AbsoluteConfigKey, hint: PlistValue?) -> PlistValue? {
        if let hint, let type = ConfigType(like: hint), let result = try? snapshot.value(forKey: key, type: type) {
            return result.value?.content.plistValue
        }
        if let result = try? snapshot.value(forKey: key, type: .string) {
            guard case .string(let text)? = result.value?.content else { return nil }
            return SettingsStore.volatileValue(parsing: text, existing: hint).value
        }
        for type in untypedOrder {
            if let result = try? snapshot.value(forKey: key, type: type) { return result.value?.content.plistValue }
        }
        return nil
    }
}
