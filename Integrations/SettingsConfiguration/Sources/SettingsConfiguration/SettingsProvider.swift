#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Configuration
public import Settings
public import SettingsPlist
import Synchronization

/// A ``SettingsStore`` as a swift-configuration `ConfigProvider`: a live, read-only view of the
/// store's effective values (every layer, as the store resolves them).
///
/// Put it in a `ConfigReader` beside the other providers; what the user changed (with the
/// `settings` tool, another process, a sync, or this program's own writes) is read like any other
/// configuration, persisted, and announced at once:
///
/// ```swift
/// let config = ConfigReader(providers: [
///     CommandLineArgumentsProvider(),
///     EnvironmentVariablesProvider(),
///     SettingsProvider(store: .shared),
/// ])
/// let port = config.int(forKey: "http.port", default: 8080)
/// ```
///
/// - ``value(forKey:type:)`` reads the store's memory, synchronously;
/// - ``fetchValue(forKey:type:)`` first reloads the file if it changed on disk;
/// - ``snapshot()`` captures every value at one instant in O(1): it keeps the store's layers as
///   they are (copy-on-write values), and each read of it costs what a read of the store costs;
/// - ``watchValue(forKey:type:updatesHandler:)`` observes its one store key (a change to another
///   key costs it nothing), and ``watchSnapshot(updatesHandler:)`` the whole store; both are
///   driven by the store's own change notifications (inotify on the file, writes, syncs): no
///   polling. A value is emitted only when it changed.
///
/// Each configuration key is read at the one store key ``keyMapping`` gives (`http.port` at
/// `http/port`), the same key a provider added to the store as a layer answers at. Types convert
/// as swift-configuration's own property-list provider converts them (see
/// ``ConfigContent/init(converting:to:key:source:)``); a value of another type throws
/// ``SettingsError`` (``SettingsError/Code/typeMismatch``) naming the key and both types.
///
/// Values come back with `isSecret: true`, so that access logs and descriptions redact them, at
/// keys the store counts as secret (``SettingsKey/isSecret``: named like a secret or marked) and
/// wherever ``secrets`` says so. A key's context (`AbsoluteConfigKey.context`) is not used: the
/// store holds one value per key, as environment variables and files do.
public struct SettingsProvider: Sendable {
    /// The store read.
    public let store: SettingsStore
    /// How configuration keys map to the store's keys.
    public let keyMapping: SettingsKeyMapping
    /// Which values are secret besides those at keys the store counts as secret, asked with the
    /// store key and the stored value.
    public let secrets: SecretsSpecifier<SettingsKey, PlistValue>
    /// The name access reports show: `SettingsProvider[<file path>]` unless given.
    public let providerName: String
    /// The store keys of the configuration keys read so far, with their secrecy (worked out once:
    /// they cost more than the read itself).
    private let mapped = MappedKeys()

    /// A provider reading `store`.
    ///
    /// ```swift
    /// let provider = SettingsProvider(store: .shared, secrets: .specific(["db/url"]))
    /// ```
    ///
    /// - Parameters:
    ///   - store: the store.
    ///   - keyMapping: how keys map (default ``SettingsKeyMapping/standard``: `log.level` is
    ///     `log/level`).
    ///   - secrets: which values are secret besides those at keys the store counts as secret
    ///     (default: no others), given store keys (`.specific(["db/url"])`, exactly those keys)
    ///     and stored values. `.specific`, `.all` and `.none` are worked out once per key;
    ///     `.dynamic` is asked for each value read (again when the store changed).
    ///   - name: the provider's name in access reports.
    public init(
        store: SettingsStore, keyMapping: SettingsKeyMapping = .standard,
        secrets: SecretsSpecifier<SettingsKey, PlistValue> = .none, name: String? = nil
    ) {
        self.store = store
        self.keyMapping = keyMapping
        self.secrets = secrets
        self.providerName = name ?? "SettingsProvider[\(store.url?.path ?? "in memory")]"
    }

    /// Looks `key` up through `read` (the store, or a snapshot of it).
    func lookUp(
        _ key: AbsoluteConfigKey, type: ConfigType,
        read: (SettingsKey) -> PlistValue?, source: (SettingsKey) -> SettingsLayer?
    ) throws(SettingsError) -> LookupResult {
        try lookUp(key, mapped.entry(for: key, self), type: type, read: read, source: source)
    }

    /// Looks `key`, mapped to `mappedKey`, up through `read`.
    func lookUp(
        _ key: AbsoluteConfigKey, _ mappedKey: MappedKey, type: ConfigType,
        read: (SettingsKey) -> PlistValue?, source: (SettingsKey) -> SettingsLayer?
    ) throws(SettingsError) -> LookupResult {
        let storeKey = mappedKey.storeKey
        guard let stored = read(storeKey) else { return LookupResult(encodedKey: storeKey.path, value: nil) }
        let content: ConfigContent
        do {
            content = try ConfigContent(converting: stored, to: type, key: storeKey)
        } catch {
            var error = error
            error.source = source(storeKey)
            error.detail = "configuration key '\(key)'"
            throw error
        }
        let isSecret = mappedKey.secrecy ?? secrets.isSecret(key: storeKey, value: stored)
        return LookupResult(encodedKey: storeKey.path, value: ConfigValue(content, isSecret: isSecret))
    }

    /// Whether the value at `key` is secret: the store counts the key secret, or ``secrets`` says so.
    func isSecret(_ key: SettingsKey, _ value: PlistValue) -> Bool {
        key.isSecret || secrets.isSecret(key: key, value: value)
    }

    /// Whether the value at `key` is secret whatever it is (`nil`: it depends on the value).
    func secrecy(of key: SettingsKey) -> Bool? {
        if key.isSecret { return true }
        switch secrets {
        case .all: return true
        case .none: return false
        case .specific(let keys): return keys.contains(key)
        case .dynamic: return nil
        }
    }

    /// `key=value` for every configuration key that `values` hold, sorted by key, secret values
    /// redacted (for descriptions: a provider layer of the store shows only where another layer
    /// has the key, as in ``SettingsStore/effectiveValues``).
    func listing(of values: PlistDictionary) -> [String] {
        var entries: [(key: AbsoluteConfigKey, text: String)] = []
        var pending: [(prefix: [String], dictionary: PlistDictionary)] = [([], values)]
        while let (prefix, dictionary) = pending.popLast() {  // a loop, not recursion: files nest deeply
            for (name, value) in zip(dictionary.keys, dictionary.values) {
                let path = prefix + [name]
                if case .dictionary(let inner) = value, !inner.isEmpty {
                    pending.append((path, inner))
                    continue
                }
                let storeKey = SettingsKey(components: path)
                guard let configKey = keyMapping.configKey(storeKey) else { continue }
                entries.append((configKey, "\(configKey)=\(isSecret(storeKey, value) ? "<REDACTED>" : value.description)"))
            }
        }
        return entries.sorted { $0.key < $1.key }.map(\.text)
    }

    /// `SettingsProvider[<file path>, <count> values: a=1, b=<REDACTED>]` (a name given to the
    /// provider stands for `SettingsProvider[<file path>`).
    func describe(_ values: PlistDictionary) -> String {
        let entries = listing(of: values)
        let head = providerName.hasSuffix("]") ? "\(providerName.dropLast()), " : "\(providerName)["
        return "\(head)\(entries.count) values: \(entries.joined(separator: ", "))]"
    }
}

extension SettingsProvider: ConfigProvider {
    /// The value at `key` from the store's memory (no I/O after the file's first read).
    ///
    /// - Throws: ``SettingsError`` (``SettingsError/Code/typeMismatch``) when the stored value
    ///   does not convert to `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        // The last result read at this key stays current while the store's generation, read
        // before the value, is unchanged.
        let generation = store.generation
        let mappedKey = mapped.entry(for: key, self)
        if let last = mappedKey.last, last.generation == generation, last.type == type { return last.result }
        let result = try lookUp(key, mappedKey, type: type, read: { store.value(for: $0) }, source: { store.source(of: $0) })
        mapped.remember(result, of: type, at: generation, for: key)
        return result
    }

    /// Reloads the store's file if it changed on disk, then returns the value at `key`.
    public nonisolated(nonsending) func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        await store.reload()
        return try value(forKey: key, type: type)
    }

    /// The current value at `key`, then every different value it takes, as the store announces
    /// changes to its store key (through the store's per-key observation: changes to other keys
    /// cost this watch nothing). Ends when the handler returns or the task is cancelled.
    public nonisolated(nonsending) func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        let updates = Updates<Result<LookupResult, any Error>>(same: Self.sameResult) {
            Result { () throws(SettingsError) -> LookupResult in
                try lookUp(key, type: type, read: { store.value(for: $0) }, source: { store.source(of: $0) })
            }
        }
        let observation = store.onChange(of: mapped.entry(for: key, self).storeKey) { _, _ in updates.emit() }
        defer {
            observation.cancel()
            updates.finish()
        }
        updates.emit()
        return try await updatesHandler(ConfigUpdatesAsyncSequence(updates.stream))
    }

    /// Every value at one instant, in O(1): the store's layers as they are now (copy-on-write
    /// values: the store's next write to a layer copies that layer's top-level dictionary once,
    /// as `MutableInMemoryProvider`'s next write copies its values). Each read of the snapshot
    /// costs what a read of the store costs.
    public func snapshot() -> any ConfigSnapshot {
        SettingsProviderSnapshot(provider: self, values: store.snapshot())
    }

    /// The current snapshot, then a new one after every change to the store's values.
    public nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let updates = Updates<SettingsProviderSnapshot>(same: { $0.values == $1.values }) {
            SettingsProviderSnapshot(provider: self, values: store.snapshot())
        }
        let observation = store.onChange { _ in updates.emit() }
        defer {
            observation.cancel()
            updates.finish()
        }
        updates.emit()
        return try await updatesHandler(ConfigUpdatesAsyncSequence(updates.stream.map { $0 as any ConfigSnapshot }))
    }

    /// Two results that would read the same.
    static func sameResult(_ a: Result<LookupResult, any Error>, _ b: Result<LookupResult, any Error>) -> Bool {
        switch (a, b) {
        case (.success(let x), .success(let y)): x == y
        case (.failure(let x as SettingsError), .failure(let y as SettingsError)): x == y
        default: false
        }
    }
}

extension SettingsProvider: CustomStringConvertible, CustomDebugStringConvertible {
    /// `SettingsProvider[<file path>]`.
    public var description: String { providerName }

    /// Every configuration key the store holds now, with its value, secret values redacted, as
    /// swift-configuration's own providers list theirs:
    /// `SettingsProvider[in memory, 2 values: db.password=<REDACTED>, http.port=8080]`.
    public var debugDescription: String { describe(store.effectiveValues) }
}

/// The store key a provider's mapping gave for a configuration key, whether its values are
/// secret whatever they are (`nil`: ask the provider's ``SettingsProvider/secrets`` per value), and
/// the last result read from the store at it.
struct MappedKey: Sendable {
    let storeKey: SettingsKey
    let secrecy: Bool?
    /// The last result of ``SettingsProvider/value(forKey:type:)``: the store's generation read
    /// before it, the type asked for, and the result.
    var last: (generation: UInt64, type: ConfigType, result: LookupResult)?
}

/// The store keys a provider's mapping gave for each configuration key (by its components: the
/// context is not used) and their last results, at most `limit` of them (then it starts over: a
/// program reads a bounded set of keys).
final class MappedKeys: Sendable {
    private let cache = Mutex<[[String]: MappedKey]>([:])
    private let limit = 4096

    func entry(for key: AbsoluteConfigKey, _ provider: SettingsProvider) -> MappedKey {
        if let known = cache.withLock({ $0[key.components] }) { return known }
        let storeKey = provider.keyMapping.storeKey(key)
        let entry = MappedKey(storeKey: storeKey, secrecy: provider.secrecy(of: storeKey))
        cache.withLock { cache in
            if cache.count >= limit { cache.removeAll(keepingCapacity: true) }
            cache[key.components] = entry
        }
        return entry
    }

    /// Keeps `result` as the last one read at `key` (unless a newer one is kept already).
    func remember(_ result: LookupResult, of type: ConfigType, at generation: UInt64, for key: AbsoluteConfigKey) {
        cache.withLock { cache in
            if let kept = cache[key.components]?.last?.generation, kept > generation { return }
            cache[key.components]?.last = (generation, type, result)
        }
    }
}

/// The store's values at one instant (``SettingsStore/snapshot()``: O(1) to take, read as the
/// store reads), as a `ConfigSnapshot`.
struct SettingsProviderSnapshot: ConfigSnapshot, CustomStringConvertible, CustomDebugStringConvertible {
    let provider: SettingsProvider
    let values: SettingsSnapshot

    var providerName: String { provider.providerName }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try provider.lookUp(key, type: type, read: { values.value(for: $0) }, source: { values.source(of: $0) })
    }

    /// `SettingsProvider[<file path>] snapshot`: no values (secret or not).
    var description: String { "\(providerName) snapshot" }

    /// Every configuration key of the snapshot with its value, secret values redacted.
    var debugDescription: String { provider.describe(values.effectiveValues) }
}

/// An `AsyncStream` fed with the latest value whenever `emit()` is called, skipping a value the
/// same as the one emitted before. Emissions are serialized, so the stream's order is the order
/// the values were read in.
final class Updates<Element: Sendable>: Sendable {
    let stream: AsyncStream<Element>
    private let continuation: AsyncStream<Element>.Continuation
    private let current: @Sendable () -> Element
    private let same: @Sendable (Element, Element) -> Bool
    /// The last value emitted (read and emitted under this lock, which nothing else takes).
    private let last = Mutex<Element?>(nil)

    init(same: @escaping @Sendable (Element, Element) -> Bool, current: @escaping @Sendable () -> Element) {
        (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(1))
        self.current = current
        self.same = same
    }

    /// Reads the current value and emits it unless it is the one emitted last.
    func emit() {
        last.withLock { last in
            let value = current()
            if let previous = last, same(previous, value) { return }
            last = value
            continuation.yield(value)
        }
    }

    /// Ends the stream.
    func finish() { continuation.finish() }
}
