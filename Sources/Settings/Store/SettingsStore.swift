#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
import SettingsFiles
import Synchronization
import Observation

/// Holds settings in layers and persists the user's layer to a property-list file.
///
/// Reads and writes are synchronous and cheap: the values live in memory behind a `Mutex`, so
/// `@Setting` getters and setters never wait for the disk. The actor owns persistence.
///
/// ```swift
/// let store = SettingsStore.inMemory()              // for tests
/// store.register(defaults: ["Network": ["timeout": 30]])
/// store["Network/timeout"]                          // 30, from .defaults
/// store["Network/timeout"] = 60                     // written to the user layer
/// store.source(of: "Network/timeout")               // .user
/// store.removeValue(for: "Network/timeout")         // the default shows again
/// ```
public actor SettingsStore {
    /// Everything behind the store's lock (``StoreValues/storage``): the values, and what is
    /// not saved of them yet.
    struct State: Sendable {
        /// The layers' values and the rules that combine them.
        var layers = SettingsLayers()
        /// What is not saved yet, and the save and keep-alive that wait for it (persistence
        /// bookkeeping, apart from the values; under the same lock, because a write and the
        /// record of it must be one step for a save never to take one without the other).
        var unsaved = UnsavedChanges()
        /// Keys read by settings, with the key path the Observation framework knows them by;
        /// writes to them are passed on to the framework's registrar.
        var tracked = TrackedKeys()
        /// Hook (explain/renames): where each layer's values came from, and the renamed keys.
        var sources = LayerSources()
        /// The administrator's files as last read (the ``SettingsLayer/system`` and
        /// ``SettingsLayer/locked`` layers hold their merged values; this names the files).
        var system = PlistSystemLayers()

        /// One layer's dictionary (read-only; change it with ``modify(_:_:)``).
        subscript(layer: SettingsLayer) -> PlistDictionary { layers[layer] }

        /// Changes one layer in place (no copy of the layer's storage).
        mutating func modify<R>(_ layer: SettingsLayer, _ body: (inout PlistDictionary) -> R) -> R {
            layers.modify(layer, body)
        }

        /// The effective value and its layer (see ``SettingsLayers/resolve(_:)``).
        func resolve(_ key: SettingsKey) -> (value: PlistValue, layer: SettingsLayer)? {
            layers.resolve(key)
        }

        /// The effective value as if the layers above `first` were empty.
        func resolve(_ key: SettingsKey, from first: SettingsLayer) -> (value: PlistValue, layer: SettingsLayer)? {
            layers.resolve(key, from: first)
        }

        /// Writes (or with `nil` removes) one key of one layer (see ``SettingsLayers/write(_:at:in:comparing:)``).
        mutating func write(_ value: PlistValue?, at key: SettingsKey, in layer: SettingsLayer, comparing: Bool) -> WriteEffect? {
            layers.write(value, at: key, in: layer, comparing: comparing)
        }

        /// Why `key` has no value (see ``SettingsLayers/explainMissing(_:)``).
        func explainMissing(_ key: SettingsKey) -> String? {
            layers.explainMissing(key)
        }
    }

    /// The values: layers, observers, registrar and generation, in one synchronous box that
    /// every read and write goes through (see ``StoreValues``).
    @usableFromInline nonisolated let values = StoreValues()

    /// The file the user layer is kept in, or `nil` for an in-memory store.
    public nonisolated let url: URL?
    /// What only a file store has: options, status, listeners, watch, thread (`nil` for an
    /// in-memory store).
    nonisolated let backend: FileBackend?
    /// How the file is kept: timings and limits (file stores only).
    nonisolated var persistence: PersistenceOptions? { backend?.options }
    /// Whether the file was read (always `true` for in-memory stores). File stores read their
    /// file at first use, so creating one (``shared`` as a default argument, say) costs nothing.
    nonisolated let loaded: Atomic<Bool>
    /// This store's diagnostics handler (`nil`: the process-wide ``SettingsDiagnostics/handler``).
    /// (In a struct: a function value kept directly in a `Mutex` piles up re-abstraction thunks
    /// each time it passes `inout` through `locked`, making each report slower than the last.)
    nonisolated let diagnosticsHandlerBox = Mutex(DiagnosticsHandlerSlot(call: nil))
    /// The type mismatch last reported for each key (see ``report(_:)``).
    nonisolated let reportedMismatches = Mutex<[SettingsKey: ReportedMismatch]>([:])

    /// Provenance of the file's keys and notes of non-write origins (file stores only).
    nonisolated var history: StoreHistory? { backend?.history }

    /// A store is freed once nothing refers to it and it has no unsaved changes (until then
    /// ``PendingSaves`` holds it): a file store's thread ends and its file watch is removed.
    deinit {
        guard let backend else { return }
        backend.executor.stop()
        if backend.watched.load(ordering: .acquiring) { FileWatcher.shared.unwatch(ObjectIdentifier(self)) }
    }

    /// The format the file is written in: an existing file's own, else the one asked for
    /// (XML for an in-memory store).
    public nonisolated var format: PlistFormat {
        ensureLoaded()
        return backend?.status.locked { $0.format } ?? .xml
    }

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - url: the user layer's file, or `nil` to keep everything in memory.
    ///   - format: the file format for new files (an existing file keeps its own).
    ///   - persistence: how the file is kept (file stores).
    init(url: URL?, format: PlistFormat, persistence: PersistenceOptions? = nil) {
        self.url = url
        let backend = url.map { FileBackend(url: $0, options: persistence ?? PersistenceOptions(), format: format) }
        self.backend = backend
        self.loaded = Atomic(url == nil)
        if let backend {
            backend.executor.onStartFailure.locked { $0 = { [weak self] error in self?.reportThreadFailure(error) } }
        }
    }

    /// A store that keeps everything in memory: for tests and previews.
    ///
    /// ```swift
    /// let store = SettingsStore.inMemory(["volume": 0.5])
    /// ```
    ///
    /// - Parameter values: initial values of the user layer.
    public static func inMemory(_ values: PlistDictionary = [:]) -> SettingsStore {
        let store = SettingsStore(url: nil, format: .xml)
        store.values.storage.locked { s in s.modify(.user) { $0 = values } }
        return store
    }

    /// Runs `body` with the store's state locked, after loading a file store's file if this is
    /// its first use. Never call it with a lock held that the store's executor might need.
    nonisolated func withState<R: ~Copyable>(_ body: (inout State) -> R) -> R {
        ensureLoaded()
        return values.storage.locked { (s: inout State) -> R in body(&s) }
    }

    /// Loads a file store's file at its first use (once; later calls are one atomic load).
    @inline(__always) nonisolated func ensureLoaded() {
        if !loaded.load(ordering: .acquiring) { loadFile() }
    }

    /// The change counter: different whenever any layer changed since it was last read (one
    /// atomic load). It is bumped after each change is made, so a value derived from reads made
    /// after reading it stays current for as long as it is unchanged: a cache in front of the
    /// store compares it, as `@Setting` properties do.
    ///
    /// ```swift
    /// let generation = store.generation
    /// let timeout = store["Network/timeout"]     // current while store.generation == generation
    /// ```
    @inlinable public nonisolated var generation: UInt64 { values.generation }
}

// Reads and writes: synchronous, on the caller's thread, never waiting for the file.
nonisolated extension SettingsStore {
    // MARK: Reading

    /// The effective value for `key`: the highest layer's, or `nil` when no layer has it.
    ///
    /// - Parameter key: the key path, e.g. `"Network/timeout"`.
    public func value(for key: SettingsKey) -> PlistValue? {
        withState { $0.resolve(key)?.value }
    }

    /// The layer the effective value for `key` comes from, or `nil` when no layer has it.
    ///
    /// ```swift
    /// if store.source(of: "theme") == .overrides { print("theme is fixed by an override file") }
    /// ```
    ///
    /// - Parameter key: the key path.
    public func source(of key: SettingsKey) -> SettingsLayer? {
        withState { $0.resolve(key)?.layer }
    }

    /// The value for `key` in one layer only.
    ///
    /// - Parameters:
    ///   - key: the key path.
    ///   - layer: the layer to look in.
    public func value(for key: SettingsKey, in layer: SettingsLayer) -> PlistValue? {
        withState { $0[layer].value(at: key.components) }
    }

    /// The whole of one layer.
    ///
    /// - Parameter layer: the layer.
    public func contents(of layer: SettingsLayer) -> PlistDictionary {
        withState { $0[layer] }
    }

    /// Every layer merged: what reads see, as one dictionary.
    public var effectiveValues: PlistDictionary {
        withState { $0.layers.effectiveValues }
    }

    /// The effective value for `key`, untyped: `nil` when no layer has it. Setting writes the
    /// user layer; setting `nil` removes the user's value, revealing the layers below.
    ///
    /// ```swift
    /// store["username"] = "derek"
    /// let name = store["username"]?.stringValue
    /// ```
    public subscript(key: SettingsKey) -> PlistValue? {
        get { value(for: key) }
        set { change(.user, key: key, to: newValue) }
    }

    // MARK: Writing

    /// Writes `value` to the user layer (or removes the user's value when `nil`).
    ///
    /// ```swift
    /// do {
    ///     try store.set("http://proxy:3128", for: "Network/proxy")
    /// } catch where error.code == .locked {
    ///     print(error)   // key 'Network/proxy' is locked by /etc/xdg/App/locked.plist; nothing was changed
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - value: the new value, or `nil` to remove.
    ///   - key: the key path; intermediate dictionaries are created.
    /// - Throws: ``SettingsError`` with code ``SettingsError/Code/locked`` naming the
    ///   `locked.plist` when an administrator locked the key (nothing changes). The subscript's
    ///   setter, ``removeValue(for:)`` and `@Setting` setters report the same refusal to the
    ///   diagnostics handler instead (``SettingsDiagnostic/Kind/writeRefused``).
    public func set(_ value: PlistValue?, for key: SettingsKey) throws(SettingsError) {
        if let refusal = change(.user, key: key, to: value, reportingRefusal: false) { throw SettingsError(refusal) }
    }

    /// Removes the user's value for `key`, so the next layer down shows (refused, with a
    /// diagnostic, for a locked key: see ``isWritable(_:)``).
    ///
    /// - Parameter key: the key path.
    public func removeValue(for key: SettingsKey) {
        change(.user, key: key, to: nil)
    }

    /// Removes every value of the user layer (Palau's `clear()` for the whole store), but the
    /// user's values of keys an administrator locked: those are ignored while the lock holds,
    /// never deleted, and come back when it goes.
    public func removeAllUserValues() {
        replace(.user, origin: .write) { s in
            var kept = PlistDictionary()
            if !s[.locked].isEmpty {
                for key in s[.locked].changedLeafPaths(from: PlistDictionary()) {
                    if let value = s[.user].value(at: key.components) { kept.setValue(value, at: key.components[...]) }
                }
            }
            for key in s[.user].keys { s.markDirtyKeepingAlive(SettingsKey(components: [key]), store: self) }
            s.modify(.user) { $0 = kept }
        }
    }

    /// Sets a value for this process only, above every other layer (never written to disk).
    ///
    /// - Parameters:
    ///   - value: the value, or `nil` to remove the volatile value.
    ///   - key: the key path.
    public func setVolatile(_ value: PlistValue?, for key: SettingsKey) {
        change(.volatile, key: key, to: value)
    }

    /// Registers defaults from code: merged deeply over earlier registrations (later ones win).
    ///
    /// ```swift
    /// store.register(defaults: ["autoPlay": false, "Network": ["timeout": 30]])
    /// ```
    ///
    /// - Parameter defaults: the defaults, nested dictionaries for namespaces.
    public func register(defaults: PlistDictionary) {
        register(defaults: defaults, path: nil)
    }

    /// Registers defaults read from the file at `path` (`nil`: from code).
    func register(defaults: PlistDictionary, path: String?) {
        if let refusal = defaults.nestingRefusal() {
            report(SettingsDiagnostic(.writeRefused, key: refusal.key, "\(refusal); the defaults were not registered"))
            return
        }
        replace(.defaults, origin: .defaults) { $0.modify(.defaults) { $0 = defaults.merged(over: $0) } }
        recordRegistration(.defaults, defaults, path: path)  // hook (explain/renames)
    }

    /// Lays `overrides` over the override layer, merged deeply (TFOptionsKit's target options).
    ///
    /// - Parameter overrides: the override values.
    public func addOverrides(_ overrides: PlistDictionary) {
        addOverrides(overrides, path: nil)
    }

    /// Lays overrides read from the file at `path` (`nil`: from code) over the override layer.
    func addOverrides(_ overrides: PlistDictionary, path: String?) {
        if let refusal = overrides.nestingRefusal() {
            report(SettingsDiagnostic(.writeRefused, key: refusal.key, "\(refusal); the overrides were not added"))
            return
        }
        replace(.overrides, origin: .overrides) { $0.modify(.overrides) { $0 = overrides.merged(over: $0) } }
        recordRegistration(.overrides, overrides, path: path)  // hook (explain/renames)
    }

    /// The one single-key write path: changes one key of one layer through
    /// ``commit(_:origin:loadingFile:_:)`` and delivers the change when the key's value changed.
    /// A user-layer write to a locked key changes nothing: the refusal is returned, and reported
    /// as a ``SettingsDiagnostic/Kind/writeRefused`` diagnostic when `reportingRefusal`.
    @discardableResult
    func change(_ layer: SettingsLayer, key: SettingsKey, to value: PlistValue?, reportingRefusal: Bool = true) -> PlistLocks.Refusal? {
        change(layer, key: key, to: value, reportingRefusal: reportingRefusal, resolving: false).refusal
    }

    /// What a single-key write did.
    struct ChangeResult {
        /// The lock that refused the write (nothing changed).
        var refusal: PlistLocks.Refusal?
        /// The key's effective value just after the write, read under the same lock (only
        /// when asked for: `@Setting` caches it, without taking the lock again).
        var effective: PlistValue?
    }

    /// ``change(_:key:to:reportingRefusal:)``, also reading the key's effective value after the
    /// write when `resolving`.
    func change(_ layer: SettingsLayer, key: SettingsKey, to value: PlistValue?, reportingRefusal: Bool, resolving: Bool) -> ChangeResult {
        if let refusal = key.refusal(toStore: value, sizeLimit: layer.isUser ? persistence?.maximumFileSize : nil) {
            report(SettingsDiagnostic(.writeRefused, key: key, "\(refusal); nothing was changed"))
            return ChangeResult()
        }
        var result = ChangeResult()
        deliver(commit(layer, origin: SettingsChange.Origin(layer)) { s, audience in
            if layer.isUser, let refusal = Self.lockRefusal(s, key: key) {  // hook (locks)
                result.refusal = refusal
                return .unchanged
            }
            let userBefore = audience.userLayer ? s[.user].value(at: key.components) : nil
            // Which effective values changed is worked out only for someone who hears of it:
            // observers, a user-layer observer, or a tracked key that may be this one, above
            // it or below it (``TrackedKeys/mayRelate(to:)``; for any other key it is no one).
            let comparing = audience.observing || audience.userLayer || (audience.tracking && s.tracked.mayRelate(to: key))
            let effect = s.write(value, at: key, in: layer, comparing: comparing)
            if resolving {
                result.effective = s.layers.isOwnEffectiveValue(value, in: layer) ? value : s.resolve(key)?.value
            }
            guard let effect else { return .unchanged }
            if layer.isUser { s.markDirtyKeepingAlive(key, store: self) }
            if case .none = effect, !audience.observing, !audience.userLayer { return .unheard }
            return .key(key, effect, userBefore: userBefore)
        })
        if let refusal = result.refusal, reportingRefusal { report(SettingsDiagnostic(.writeRefused, key: key, refusal.description)) }
        return result
    }
}

extension SettingsChange.Origin {
    /// What a single-key write to `layer` is announced as.
    init(_ layer: SettingsLayer) {
        switch layer {
        case .locked: self = .locks
        case .system: self = .systemDefaults
        case .volatile: self = .volatile
        case .overrides: self = .overrides
        case .user: self = .write
        case .defaults: self = .defaults
        case .provider: self = .provider
        }
    }
}
