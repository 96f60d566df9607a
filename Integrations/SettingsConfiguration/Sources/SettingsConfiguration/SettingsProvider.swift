#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Configuration
public import Settings
import SettingsPlist
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
/// - ``snapshot()`` captures every value at one instant (one lock);
/// - ``watchValue(forKey:type:updatesHandler:)`` and ``watchSnapshot(updatesHandler:)`` are
///   driven by the store's own change notifications (inotify on the file, writes, syncs): no
///   polling. A value is emitted only when it changed.
///
/// Types convert as swift-configuration's own property-list provider converts them (see
/// ``ConfigContent/init(converting:to:key:source:)``); a value of another type throws
/// ``SettingsError`` (``SettingsError/Code/typeMismatch``) naming the key and both types. Values
/// at keys the store counts as secret (``SettingsKey/isSecret``) come back with `isSecret: true`,
/// so access logs redact them.
public struct SettingsProvider: Sendable {
    /// The store read.
    public let store: SettingsStore
    /// How configuration keys map to the store's keys.
    public let keyMapping: SettingsKeyMapping
    /// The name access reports show: `SettingsProvider[<file path>]` unless given.
    public let providerName: String
    /// The store keys of the configuration keys read so far, with their secrecy (worked out once:
    /// they cost more than the read itself).
    private let mapped = MappedKeys()

    /// A provider reading `store`.
    ///
    /// - Parameters:
    ///   - store: the store.
    ///   - keyMapping: how keys map (default ``SettingsKeyMapping/standard``: `log.level` is
    ///     `log/level`, or the top-level key `log.level`).
    ///   - name: the provider's name in access reports.
    public init(store: SettingsStore, keyMapping: SettingsKeyMapping = .standard, name: String? = nil) {
        self.store = store
        self.keyMapping = keyMapping
        self.providerName = name ?? "SettingsProvider[\(store.url?.path ?? "in memory")]"
    }

    /// Looks `key` up through `read` (the store, or a snapshot of it).
    func lookUp(
        _ key: AbsoluteConfigKey, type: ConfigType,
        read: (SettingsKey) -> PlistValue?, source: (SettingsKey) -> SettingsLayer?
    ) throws(SettingsError) -> LookupResult {
        let candidates = mapped.storeKeys(for: key, keyMapping)
        for (storeKey, isSecret) in candidates {
            guard let stored = read(storeKey) else { continue }
            let content: ConfigContent
            do {
                content = try ConfigContent(converting: stored, to: type, key: storeKey)
            } catch {
                var error = error
                error.source = source(storeKey)
                error.detail = "configuration key '\(key)'"
                throw error
            }
            return LookupResult(encodedKey: storeKey.path, value: ConfigValue(content, isSecret: isSecret))
        }
        return LookupResult(encodedKey: candidates.first?.key.path ?? key.description, value: nil)
    }

    /// Whether a change to the store can change the value at `key`.
    func isAffected(_ key: AbsoluteConfigKey, by change: SettingsChange) -> Bool {
        keyMapping.storeKeys(key).contains(where: change.affects)
    }
}

extension SettingsProvider: ConfigProvider {
    /// The value at `key` from the store's memory (no I/O after the file's first read).
    ///
    /// - Throws: ``SettingsError`` (``SettingsError/Code/typeMismatch``) when the stored value
    ///   does not convert to `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try lookUp(key, type: type, read: { store.value(for: $0) }, source: { store.source(of: $0) })
    }

    /// Reloads the store's file if it changed on disk, then returns the value at `key`.
    public nonisolated(nonsending) func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        await store.reload()
        return try value(forKey: key, type: type)
    }

    /// The current value at `key`, then every different value it takes, as the store announces
    /// its changes. Ends when the handler returns or the task is cancelled.
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
        let observation = store.onChange { change in
            if isAffected(key, by: change) { updates.emit() }
        }
        defer {
            observation.cancel()
            updates.finish()
        }
        updates.emit()
        return try await updatesHandler(ConfigUpdatesAsyncSequence(updates.stream))
    }

    /// Every value at one instant.
    public func snapshot() -> any ConfigSnapshot {
        SettingsSnapshot(provider: self, values: store.effectiveValues)
    }

    /// The current snapshot, then a new one after every change to the store's values.
    public nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let updates = Updates<SettingsSnapshot>(same: { $0.values == $1.values }) {
            SettingsSnapshot(provider: self, values: store.effectiveValues)
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

extension SettingsProvider: CustomStringConvertible {
    /// `SettingsProvider[<file path>]`.
    public var description: String { providerName }
}

/// The store keys a provider's mapping gave for each configuration key, with their secrecy, at
/// most `limit` of them (then it starts over: a program reads a bounded set of keys).
final class MappedKeys: Sendable {
    private let cache = Mutex<[AbsoluteConfigKey: [(key: SettingsKey, isSecret: Bool)]]>([:])
    private let limit = 4096

    func storeKeys(for key: AbsoluteConfigKey, _ mapping: SettingsKeyMapping) -> [(key: SettingsKey, isSecret: Bool)] {
        if let known = cache.withLock({ $0[key] }) { return known }
        let keys = mapping.storeKeys(key).map { (key: $0, isSecret: $0.isSecret) }
        cache.withLock { cache in
            if cache.count >= limit { cache.removeAll(keepingCapacity: true) }
            cache[key] = keys
        }
        return keys
    }
}

/// The store's values at one instant, as a `ConfigSnapshot`.
struct SettingsSnapshot: ConfigSnapshot {
    let provider: SettingsProvider
    /// Every layer merged (``SettingsStore/effectiveValues``).
    let values: PlistDictionary

    var providerName: String { provider.providerName }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try provider.lookUp(key, type: type, read: { values.value(at: $0) }, source: { _ in nil })
    }
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

extension PlistDictionary {
    /// The value at a store key path, or `nil` when a step is missing or not a dictionary.
    func value(at key: SettingsKey) -> PlistValue? {
        var dictionary = self
        for (index, component) in key.components.enumerated() {
            guard let value = dictionary[component] else { return nil }
            if index == key.components.count - 1 { return value }
            guard case .dictionary(let inner) = value else { return nil }
            dictionary = inner
        }
        return nil
    }
}
