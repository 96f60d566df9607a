#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
public import Synchronization
public import Observation

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
    /// Everything behind the lock.
    struct State: Sendable {
        /// The layers' values and the rules that combine them.
        var layers = SettingsLayers()
        /// Keys of the user layer changed since the last save, in order, possibly repeated
        /// (appending is cheaper than hashing on every write); see ``markDirty(_:)``.
        /// Only file-backed stores track them.
        var dirty: [SettingsKey] = []
        /// The length at which `dirty` is next compacted: twice its length after the last
        /// compaction (at least 4,096), so compaction costs O(1) amortised per write at any count.
        var compactAt = 4096
        var tracksChanges = false
        /// Whether a save is scheduled or running after a change (file stores with autosave on).
        var autosaves = false
        var saveScheduled = false
        /// Whether the store is in ``PendingSaves`` (it has, or just had, unsaved changes).
        var pending = false
        /// Keys read by settings, with the key path the Observation framework knows them by;
        /// writes to them are passed on to the framework's registrar.
        var tracked: [SettingsKey: any ObservedKeyPath] = [:]

        /// Records a changed user key; compacts the list when a long burst repeats keys.
        /// - Returns: whether the store just gained unsaved changes (it must be kept alive until
        ///   they are saved; see ``PendingSaves``).
        mutating func markDirty(_ key: SettingsKey) -> Bool {
            guard tracksChanges else { return false }
            dirty.append(key)
            if dirty.count >= compactAt {
                var seen = Set<SettingsKey>(minimumCapacity: dirty.count)
                dirty = dirty.filter { seen.insert($0).inserted }
                compactAt = max(4096, dirty.count * 2)
            }
            guard !pending else { return false }
            pending = true
            return true
        }

        /// Takes the keys changed since the last save (given back by ``restoreDirty(_:)`` when
        /// the save fails).
        mutating func takeDirty() -> [SettingsKey] {
            defer {
                dirty = []
                compactAt = 4096
            }
            return dirty
        }

        /// Gives back keys taken for a save that failed, before any changed since.
        mutating func restoreDirty(_ keys: [SettingsKey]) {
            guard !keys.isEmpty else { return }
            dirty = keys + dirty
            compactAt = max(compactAt, dirty.count * 2)
        }

        /// Whether a save should be scheduled now: there are unsaved changes and none is pending.
        mutating func takeSaveRequest() -> Bool {
            guard autosaves, !saveScheduled, !dirty.isEmpty else { return false }
            saveScheduled = true
            return true
        }

        /// The key paths whose effective value differs from `before`'s, given that only `layer`
        /// changed between the two states.
        func effectiveChanges(from before: State, in layer: SettingsLayer) -> [SettingsKey] {
            layers.effectiveChanges(from: before.layers, in: layer)
        }

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

    /// The layers and the bookkeeping of writes, behind the lock every read and write takes
    /// briefly. Use ``withState(_:)``, which loads a file store's file first.
    nonisolated let storage: Mutex<State>
    /// Who is told about changes, and the queue their callbacks go through.
    nonisolated let observers = SettingsObservers()
    /// The Observation framework's registrar: settings report reads to it, changes reach it
    /// through ``observers``.
    @usableFromInline nonisolated let registrar = ObservationRegistrar()
    /// Bumped on every change to any layer; `@Setting` caches compare it to stay current.
    @usableFromInline nonisolated let generationCounter = Atomic<UInt64>(0)

    /// The file the user layer is kept in, or `nil` for an in-memory store.
    public nonisolated let url: URL?
    /// How the file is kept: timings and limits (file stores only).
    nonisolated let persistence: PersistenceOptions?
    /// The user's file, for file stores: loaded, saved and reloaded only on the store's executor.
    var file: SettingsFile?
    /// Whether the file was read (always `true` for in-memory stores). File stores read their
    /// file at first use, so creating one (``shared`` as a default argument, say) costs nothing.
    nonisolated let loaded: Atomic<Bool>
    /// What the store's persistence has found and done, readable without waiting for it.
    nonisolated let status: Mutex<PersistenceStatus>
    /// This store's diagnostics handler (`nil`: the process-wide ``SettingsDiagnostics/handler``).
    /// (In a struct: a function value kept directly in a `Mutex` piles up re-abstraction thunks
    /// each time it passes `inout` through `locked`, making each report slower than the last.)
    nonisolated let diagnosticsHandlerBox = Mutex(DiagnosticsHandlerSlot(call: nil))
    /// The type mismatch last reported for each key (see ``report(_:)``).
    nonisolated let reportedMismatches = Mutex<[SettingsKey: ReportedMismatch]>([:])
    /// Who listens to ``persistenceUpdates``.
    nonisolated let statusListeners = Mutex(StatusListeners())
    /// Persistence work owned by the store's executor.
    var autosave = AutosaveState()

    /// Provenance of the file's keys and notes of non-write origins (history hook; see
    /// SettingsFile+History.swift). Never touched by `@Setting` reads or writes.
    nonisolated let history = StoreHistory()

    /// The store's own persistence thread (started by its first job).
    nonisolated let executor = PersistenceExecutor()

    /// Every store runs its persistence on its own thread, never on Swift's cooperative pool
    /// (see ``PersistenceExecutor``).
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// Whether the file watcher holds an entry for the store (given back when it is freed).
    nonisolated let watched = Atomic<Bool>(false)

    /// A store is freed once nothing refers to it and it has no unsaved changes (until then
    /// ``PendingSaves`` holds it): its thread ends and its file watch is removed.
    deinit {
        executor.stop()
        if watched.load(ordering: .acquiring) { FileWatcher.shared.unwatch(ObjectIdentifier(self)) }
    }

    /// The format the file is written in: an existing file's own, else the one asked for.
    public nonisolated var format: PlistFormat {
        ensureLoaded()
        return status.locked { $0.format }
    }

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - url: the user layer's file, or `nil` to keep everything in memory.
    ///   - format: the file format for new files (an existing file keeps its own).
    ///   - persistence: how the file is kept (file stores).
    init(url: URL?, format: PlistFormat, persistence: PersistenceOptions? = nil) {
        self.url = url
        let options = url == nil ? nil : (persistence ?? PersistenceOptions())
        self.persistence = options
        self.file = url.flatMap { url in options.map { SettingsFile(url: url, format: format, options: $0) } }
        self.storage = Mutex(State())
        self.loaded = Atomic(url == nil)
        self.status = Mutex(PersistenceStatus(format: format))
        if url != nil {
            executor.onStartFailure.locked { $0 = { [weak self] error in self?.reportThreadFailure(error) } }
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
        store.storage.locked { s in s.modify(.user) { $0 = values } }
        return store
    }

    /// Runs `body` with the store's state locked, after loading a file store's file if this is
    /// its first use. Never call it with a lock held that the store's executor might need.
    nonisolated func withState<R>(_ body: (inout State) -> R) -> R {
        ensureLoaded()
        return storage.locked { (s: inout State) -> R in body(&s) }
    }

    /// Loads a file store's file at its first use (once; later calls are one atomic load).
    @inline(__always) nonisolated func ensureLoaded() {
        if !loaded.load(ordering: .acquiring) { loadFile() }
    }

    /// The change counter: different whenever any layer changed since it was last read.
    @inlinable nonisolated var generation: UInt64 { generationCounter.load(ordering: .acquiring) }

    // MARK: Reading

    /// The effective value for `key`: the highest layer's, or `nil` when no layer has it.
    ///
    /// - Parameter key: the key path, e.g. `"Network/timeout"`.
    public nonisolated func value(for key: SettingsKey) -> PlistValue? {
        withState { $0.resolve(key)?.value }
    }

    /// The layer the effective value for `key` comes from, or `nil` when no layer has it.
    ///
    /// ```swift
    /// if store.source(of: "theme") == .overrides { print("theme is fixed by an override file") }
    /// ```
    ///
    /// - Parameter key: the key path.
    public nonisolated func source(of key: SettingsKey) -> SettingsLayer? {
        withState { $0.resolve(key)?.layer }
    }

    /// The value for `key` in one layer only.
    ///
    /// - Parameters:
    ///   - key: the key path.
    ///   - layer: the layer to look in.
    public nonisolated func value(for key: SettingsKey, in layer: SettingsLayer) -> PlistValue? {
        withState { $0[layer].value(at: key.components) }
    }

    /// The whole of one layer.
    ///
    /// - Parameter layer: the layer.
    public nonisolated func contents(of layer: SettingsLayer) -> PlistDictionary {
        withState { $0[layer] }
    }

    /// Every layer merged: what reads see, as one dictionary.
    public nonisolated var effectiveValues: PlistDictionary {
        withState { $0.layers.effectiveValues }
    }

    /// The effective value for `key`, untyped: `nil` when no layer has it. Setting writes the
    /// user layer; setting `nil` removes the user's value, revealing the layers below.
    ///
    /// ```swift
    /// store["username"] = "derek"
    /// let name = store["username"]?.stringValue
    /// ```
    public nonisolated subscript(key: SettingsKey) -> PlistValue? {
        get { value(for: key) }
        set { set(newValue, for: key) }
    }

    // MARK: Writing

    /// Writes `value` to the user layer (or removes the user's value when `nil`).
    ///
    /// - Parameters:
    ///   - value: the new value, or `nil` to remove.
    ///   - key: the key path; intermediate dictionaries are created.
    public nonisolated func set(_ value: PlistValue?, for key: SettingsKey) {
        change(.user, key: key, to: value)
    }

    /// Removes the user's value for `key`, so the next layer down shows.
    ///
    /// - Parameter key: the key path.
    public nonisolated func removeValue(for key: SettingsKey) {
        change(.user, key: key, to: nil)
    }

    /// Removes every value of the user layer (Palau's `clear()` for the whole store).
    public nonisolated func removeAllUserValues() {
        replace(.user, origin: .write) { s in
            for key in s[.user].keys { s.markDirtyKeepingAlive(SettingsKey(components: [key]), store: self) }
            s.modify(.user) { $0 = PlistDictionary() }
        }
    }

    /// Sets a value for this process only, above every other layer (never written to disk).
    ///
    /// - Parameters:
    ///   - value: the value, or `nil` to remove the volatile value.
    ///   - key: the key path.
    public nonisolated func setVolatile(_ value: PlistValue?, for key: SettingsKey) {
        change(.volatile, key: key, to: value)
    }

    /// Registers defaults from code: merged deeply over earlier registrations (later ones win).
    ///
    /// ```swift
    /// store.register(defaults: ["autoPlay": false, "Network": ["timeout": 30]])
    /// ```
    ///
    /// - Parameter defaults: the defaults, nested dictionaries for namespaces.
    public nonisolated func register(defaults: PlistDictionary) {
        if let refusal = defaults.nestingRefusal() {
            report(SettingsDiagnostic(.writeRefused, key: refusal.key, "\(refusal); the defaults were not registered"))
            return
        }
        replace(.defaults, origin: .defaults) { $0.modify(.defaults) { $0 = defaults.merged(over: $0) } }
    }

    /// Lays `overrides` over the override layer, merged deeply (TFOptionsKit's target options).
    ///
    /// - Parameter overrides: the override values.
    public nonisolated func addOverrides(_ overrides: PlistDictionary) {
        if let refusal = overrides.nestingRefusal() {
            report(SettingsDiagnostic(.writeRefused, key: refusal.key, "\(refusal); the overrides were not added"))
            return
        }
        replace(.overrides, origin: .overrides) { $0.modify(.overrides) { $0 = overrides.merged(over: $0) } }
    }

    /// Changes one layer as a whole (or several keys of it), bumps the generation, and announces
    /// the keys whose effective value changed.
    ///
    /// - Parameters:
    ///   - layer: the layer `body` changes (only it is compared to find what changed).
    ///   - origin: what the change is announced as.
    ///   - body: changes the state; it runs under the store's lock.
    nonisolated func replace(_ layer: SettingsLayer, origin: SettingsChange.Origin, _ body: (inout State) -> Void) {
        let (changed, keyPaths, save, observing, userChanges) = withState {
            s -> ([SettingsKey], TrackedKeyPaths, Bool, Bool, [SettingsKey]) in
            // Read under the lock: an observer registering now either sees this change in its
            // initial value or is counted here (see ``SettingsObservers/add(key:current:onValue:)``).
            let observing = observers.isActive
            let userLayer = layer == .user && observers.watchesUserLayer ? s[.user] : nil
            guard observing || !s.tracked.isEmpty else {
                body(&s)
                return ([], TrackedKeyPaths(), s.takeSaveRequest(), false, userLayer.map { s[.user].changedLeafPaths(from: $0) } ?? [])
            }
            let before = s
            body(&s)
            let changed = s.effectiveChanges(from: before, in: layer)
            return (changed, s.trackedKeyPaths(for: .keys(changed), writing: SettingsKey(components: [])), s.takeSaveRequest(), observing,
                    userLayer.map { s[.user].changedLeafPaths(from: $0) } ?? [])
        }
        generationCounter.add(1, ordering: .releasing)
        if save { scheduleSave() }
        announce(keyPaths)
        if observing { publish(changed, origin: origin) }
        observers.publishUserLayer(userChanges, origin: origin)
    }

    /// The one single-key write path: changes one key of one layer, bumps the generation, and
    /// announces the change when the key's effective value changed.
    nonisolated func change(_ layer: SettingsLayer, key: SettingsKey, to value: PlistValue?) {
        if let refusal = key.refusal(toStore: value, sizeLimit: layer == .user ? persistence?.maximumFileSize : nil) {
            report(SettingsDiagnostic(.writeRefused, key: key, "\(refusal); nothing was changed"))
            return
        }
        let outcome = withState { s -> (effect: WriteEffect, keyPaths: TrackedKeyPaths, save: Bool, observing: Bool, user: [SettingsKey])? in
            let observing = observers.isActive  // under the lock: see replace(_:origin:_:)
            let watched = observing || !s.tracked.isEmpty
            let tapsUserLayer = layer == .user && observers.watchesUserLayer
            let userBefore = tapsUserLayer ? s[.user].value(at: key.components) : nil
            guard let effect = s.write(value, at: key, in: layer, comparing: watched || tapsUserLayer) else { return nil }
            let user = tapsUserLayer ? Self.leafChanges(at: key, from: userBefore, to: s[.user].value(at: key.components)) : []
            var save = false
            if layer == .user {
                s.markDirtyKeepingAlive(key, store: self)
                save = s.takeSaveRequest()
            }
            return (effect, s.trackedKeyPaths(for: effect, writing: key), save, observing, user)
        }
        guard let outcome else { return }
        generationCounter.add(1, ordering: .releasing)
        if outcome.save { scheduleSave() }
        announce(outcome.keyPaths)
        if outcome.observing { publish(outcome.effect.keys(writing: key), origin: SettingsChange.Origin(layer)) }
        observers.publishUserLayer(outcome.user, origin: .write)
    }

    /// The leaf key paths under `key` that differ between two values stored at `key`.
    static func leafChanges(at key: SettingsKey, from old: PlistValue?, to new: PlistValue?) -> [SettingsKey] {
        var before = PlistDictionary()
        var after = PlistDictionary()
        before.setValue(old, at: key.components[...])
        after.setValue(new, at: key.components[...])
        return after.changedLeafPaths(from: before)
    }

    /// Tells the Observation framework that tracked keys changed (never with a lock held: its
    /// `onChange` closures run from here).
    nonisolated func announce(_ keyPaths: TrackedKeyPaths) {
        guard let first = keyPaths.first else { return }
        registrar.willSet(self, keyPath: first)
        registrar.didSet(self, keyPath: first)
        for keyPath in keyPaths.rest {
            registrar.willSet(self, keyPath: keyPath)
            registrar.didSet(self, keyPath: keyPath)
        }
    }

    /// Delivers a change to the observers (never called with a lock held).
    nonisolated func publish(_ keys: [SettingsKey], origin: SettingsChange.Origin) {
        observers.publish(keys, origin: origin) { keys in
            storage.locked { s in keys.map { s.resolve($0) } }
        }
    }
}

extension SettingsChange.Origin {
    /// What a single-key write to `layer` is announced as.
    init(_ layer: SettingsLayer) {
        switch layer {
        case .volatile: self = .volatile
        case .overrides: self = .overrides
        case .user: self = .write
        case .defaults: self = .defaults
        case .provider: self = .provider
        }
    }
}
