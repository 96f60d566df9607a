#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a file store keeps its file: when it saves, how long it waits for other processes, and
/// what it refuses to read.
///
/// ```swift
/// let store = SettingsStore.file(url, options: PersistenceOptions(lockTimeout: .seconds(5)))
/// ```
public struct PersistenceOptions: Hashable, Sendable {
    /// How long ``SettingsStore/flush()``, ``SettingsStore/flushNow()`` and the save at exit
    /// wait for another process to release the file's lock before giving up with
    /// ``SettingsError/Code/fileLocked`` (the changes are kept and autosaves keep retrying).
    public var lockTimeout: Duration
    /// The largest settings file read, in bytes: a larger one (or a sparse file claiming to be)
    /// is refused with an error naming the file and both sizes, and never written over.
    public var maximumFileSize: Int
    /// How long a malformed file must stay unchanged before a save moves it aside (an editor
    /// rewriting the file in place is given this long to finish).
    public var settleDelay: Duration
    /// How many `settings.plist.corrupt-*` files are kept beside a settings file (the oldest
    /// beyond this are removed).
    public var quarantineLimit: Int
    /// How many saved versions (generations) of the file are kept in its history (0 keeps none;
    /// see ``SettingsStore/history()``).
    public var historyLimit: Int
    /// The most bytes the file's history may take (the newest generation is always kept).
    public var historyByteBudget: Int

    /// Creates options; every parameter has the default a settings file wants.
    ///
    /// - Parameters:
    ///   - lockTimeout: the longest wait for another process's lock (default 2 s).
    ///   - maximumFileSize: the largest file read (default ``PlistFile/maximumSize``, 64 MiB,
    ///     the limit the `settings` tool keeps too).
    ///   - settleDelay: how long a malformed file must stay as it is before it is moved aside (default 200 ms).
    ///   - quarantineLimit: how many moved-aside files are kept (default 3).
    ///   - historyLimit: how many generations of the file are kept (default 20; 0 keeps none).
    ///   - historyByteBudget: the most bytes they may take (default 16 MiB).
    public init(
        lockTimeout: Duration = .seconds(2), maximumFileSize: Int = PlistFile.maximumSize,
        settleDelay: Duration = .milliseconds(200), quarantineLimit: Int = 3,
        historyLimit: Int = 20, historyByteBudget: Int = 16 << 20
    ) {
        self.historyLimit = max(0, historyLimit)
        self.historyByteBudget = max(0, historyByteBudget)
        self.lockTimeout = lockTimeout
        self.maximumFileSize = maximumFileSize
        self.settleDelay = settleDelay
        self.quarantineLimit = max(1, quarantineLimit)
    }

    /// How long after a change the file is saved (`nil`: only on ``SettingsStore/flush()``).
    var autosaveDelay: Duration? = .milliseconds(50)
    /// How changes made elsewhere are noticed.
    var externalChanges: SettingsStore.ExternalChanges = .automatic
}

extension SettingsStore {
    /// The program's store: `$XDG_CONFIG_HOME/<executable name>/settings.plist` (`~/.config` when
    /// the variable is unset). `@Setting`s without a `store:` use it.
    ///
    /// Naming it costs nothing: the file is read, and watched, only when a value is first read
    /// or written, so a setting declared with the default `store: .shared` and then bound to
    /// another store never touches the shared file.
    public static let shared: SettingsStore = {
        let url = defaultFileURL(application: ProcessInfo.processInfo.processName)
        return SettingsStore.file(url)
    }()

    /// Where an application's settings file lives by default.
    ///
    /// ```swift
    /// SettingsStore.defaultFileURL(application: "MyApp")   // ~/.config/MyApp/settings.plist
    /// ```
    ///
    /// `XDG_CONFIG_HOME` is used when it is an absolute path; `HOME` when it is set and not empty;
    /// otherwise the user's home directory from the password database.
    ///
    /// - Parameter application: the application (or domain) name.
    public static func defaultFileURL(application: String) -> URL {
        defaultFileURL(application: application, environment: ProcessInfo.processInfo.environment)
    }

    /// ``defaultFileURL(application:)`` for a given environment (an empty variable counts as unset).
    static func defaultFileURL(application: String, environment: [String: String]) -> URL {
        let base: URL
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = URL(filePath: xdg, directoryHint: .isDirectory)
        } else {
            let homePath = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.homeDirectoryForCurrentUser.path
            let home = URL(filePath: homePath, directoryHint: .isDirectory)
            base = home.appending(path: ".config", directoryHint: .isDirectory)
        }
        return base.appending(path: application, directoryHint: .isDirectory).appending(path: "settings.plist")
    }

    /// How a file store notices changes made to its file by other processes or by hand.
    public enum ExternalChanges: Hashable, Sendable {
        /// inotify on Linux (the file's directory is watched, so replacing the file by rename is
        /// seen too), polling every second where inotify is not available or the directory is
        /// gone (the watch comes back when the directory does).
        case automatic
        /// Looks at the file's identity (inode, size, modification time) at this interval.
        case polling(Duration)
        /// Changes made elsewhere are picked up only when this process saves.
        case ignored
    }

    /// A store whose user layer is kept in the plist file at `url`.
    ///
    /// Creating the store does no I/O: the file is read at the first read or write of a value,
    /// in its own format, and watched for changes made elsewhere from shortly after. A missing
    /// file is an empty store (the file and its directories are created, owner-only, at the
    /// first save). A file that cannot be parsed is reported and left alone; if it is still
    /// malformed when a save would replace it, it is moved aside to
    /// `settings.plist.corrupt-<timestamp>`, never overwritten. A file that cannot be read
    /// (permissions, not a regular file, over the size limit) is never written. Both are reported
    /// to the store's ``diagnosticsHandler`` and kept in ``loadError``.
    ///
    /// Changes are saved `autosaveDelay` after the first change of a burst (a burst of writes
    /// becomes one file write) and by ``flush()``, which returns when they are on disk. Each save
    /// takes an advisory lock, reads what other processes wrote since, and writes only the keys
    /// this process changed on top of it, so concurrent writers lose nothing. All of it runs on
    /// the store's own thread, never on Swift's cooperative pool.
    ///
    /// **Lifetime.** A store with unsaved changes stays alive until they are saved, even when the
    /// program drops every reference to it, and they are saved when the process exits normally.
    ///
    /// ```swift
    /// let store = SettingsStore.file(URL(filePath: "/tmp/demo/settings.plist"))
    /// store["volume"] = 0.8
    /// try await store.flush()
    /// ```
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - format: the format for a new file (an existing file keeps its own).
    ///   - autosaveDelay: how long after a change to save, or `nil` to save only on ``flush()``
    ///     (and at exit).
    ///   - externalChanges: how changes made to the file elsewhere are noticed.
    ///   - options: lock timeout, size limit and the handling of malformed files.
    public static func file(
        _ url: URL, format: PlistFormat = .xml, autosaveDelay: Duration? = .milliseconds(50),
        externalChanges: ExternalChanges = .automatic, options: PersistenceOptions = PersistenceOptions()
    ) -> SettingsStore {
        var options = options
        options.autosaveDelay = autosaveDelay
        options.externalChanges = externalChanges
        return SettingsStore(url: url, format: format, persistence: options)
    }

    // MARK: Flushing

    /// Writes every change made so far to the file and returns when it is durable (written,
    /// flushed to disk, renamed into place, directory flushed). Does nothing for an in-memory
    /// store or when nothing changed.
    ///
    /// ```swift
    /// settings.volume = 0.8
    /// try await SettingsStore.shared.flush()   // on disk now
    /// ```
    ///
    /// - Throws: ``SettingsError``: ``SettingsError/Code/fileLocked`` when another process held
    ///   the file's lock for longer than ``PersistenceOptions/lockTimeout``, or
    ///   ``SettingsError/Code/invalidFile`` naming the file and the reason (its directory cannot
    ///   be created, the disk is full, permission denied, or the file cannot be read and so is
    ///   left alone). The unsaved changes are kept and saved by a later flush or autosave.
    public func flush() async throws(SettingsError) {
        loadIfNeeded()
        let deadline = Deadline(self)
        var pause = Duration.milliseconds(1)
        while true {
            switch try saveOnce() {
            case .nothing, .saved:
                return
            case .busy:
                try deadline.check(lockedBy: file?.target.lock)
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(10))
            case .settling(let wait):
                try deadline.check(lockedBy: nil)
                try? await Task.sleep(for: wait)
            }
        }
    }

    /// ``flush()`` for synchronous code: writes every change made so far and returns when it is
    /// durable, blocking the calling thread meanwhile (the wait for another process's lock is
    /// bounded by ``PersistenceOptions/lockTimeout``). Do not call it from a task on Swift's
    /// cooperative pool: use ``flush()`` there.
    ///
    /// ```swift
    /// try store.flushNow()   // e.g. from a synchronous shutdown hook
    /// ```
    ///
    /// - Throws: ``SettingsError`` as ``flush()`` does.
    public nonisolated func flushNow() throws(SettingsError) {
        guard persistence != nil else { return }
        ensureLoaded()
        let deadline = Deadline(self)
        var pause = Duration.milliseconds(1)
        while true {
            let step = try onExecutor { store throws(SettingsError) in try store.saveOnce() }
            switch step {
            case .nothing, .saved:
                return
            case .busy:
                try deadline.check(lockedBy: url.map { SettingsFile.lockPath(for: $0.path) })
                pauseThread(for: pause)
                pause = min(pause * 2, .milliseconds(10))
            case .settling(let wait):
                try deadline.check(lockedBy: nil)
                pauseThread(for: wait)
            }
        }
    }

    // MARK: Status

    /// The problem found when the file was loaded: malformed or unusable, or moved aside since.
    /// `nil` when it loaded cleanly or did not exist.
    public nonisolated var loadError: SettingsError? {
        guard persistence != nil else { return nil }
        ensureLoaded()
        return status.locked { $0.loadError }
    }

    /// Counters and findings of the store's file persistence.
    public struct PersistenceStatus: Hashable, Sendable {
        /// Files written by this process (each a whole, atomic, durable replacement).
        public var fileWrites: Int = 0
        /// Times the file was reloaded after a change made elsewhere.
        public var reloads: Int = 0
        /// Where a malformed file was moved, if it was.
        public var movedAside: URL?
        /// Changes not yet written.
        public var hasUnsavedChanges: Bool = false
        /// The last save that failed (cleared by the next one that succeeds).
        public var lastSaveError: SettingsError?
        /// Whether a save is waiting for a malformed file to settle before moving it aside.
        public var waitingForFileToSettle: Bool = false
        /// The problem found when the file was loaded.
        var loadError: SettingsError?
        /// The format the file is written in.
        var format: PlistFormat

        init(format: PlistFormat) {
            self.format = format
        }
    }

    /// What the store's persistence has done so far. Reading it never waits for the disk.
    ///
    /// ```swift
    /// store.persistenceStatus.fileWrites    // 1 after a burst of 10,000 writes and a flush
    /// ```
    public nonisolated var persistenceStatus: PersistenceStatus {
        let unsaved = storage.locked { !$0.dirty.isEmpty }
        var result = status.locked { $0 }
        result.hasUnsavedChanges = unsaved
        return result
    }

    /// The persistence status after every save, failed save, reload and move-aside, as an
    /// asynchronous sequence (for a "saved" indicator, or to wait for a save in tests).
    ///
    /// ```swift
    /// for await status in store.persistenceUpdates where status.lastSaveError != nil {
    ///     showBanner("Settings could not be saved")
    /// }
    /// ```
    public nonisolated var persistenceUpdates: AsyncStream<PersistenceStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: PersistenceStatus.self, bufferingPolicy: .bufferingNewest(64))
        let id = statusListeners.locked { l in
            defer { l.next += 1 }
            l.continuations[l.next] = continuation
            return l.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.statusListeners.locked { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Receives this store's diagnostics (a malformed or unusable file, a failed autosave, a
    /// stored value of the wrong type); `nil`, the default, sends them to the process-wide
    /// ``SettingsDiagnostics/handler``. It is called with no lock held, so it may read and write
    /// the store.
    ///
    /// ```swift
    /// store.diagnosticsHandler = { diagnostic in logger.warning("\(diagnostic.message)") }
    /// ```
    public nonisolated var diagnosticsHandler: (@Sendable (SettingsDiagnostic) -> Void)? {
        get { diagnosticsHandlerBox.locked { $0.call } }
        set { diagnosticsHandlerBox.locked { $0 = DiagnosticsHandlerSlot(call: newValue) } }
    }

    /// Sends `diagnostic` to this store's handler, or the process-wide one (never call it with a
    /// lock held). A type mismatch is sent once per stored value: reading the same mismatched
    /// value again (another setting of the key, a reload that did not change it) says nothing
    /// new; a new value at the key is reported again.
    @usableFromInline nonisolated func report(_ diagnostic: SettingsDiagnostic) {
        if diagnostic.kind == .typeMismatch, let key = diagnostic.key {
            let stored = withState { $0.resolve(key)?.value }
            let isNew = reportedMismatches.locked { reported -> Bool in
                let record = ReportedMismatch(message: diagnostic.message, value: stored)
                guard reported[key] != record else { return false }
                reported[key] = record
                return true
            }
            guard isNew else { return }
        }
        if let handler = diagnosticsHandlerBox.locked({ $0.call }) {
            handler(diagnostic)
        } else {
            SettingsDiagnostics.report(diagnostic)
        }
    }
}

// MARK: - Internals, on the store's executor

/// The result of one save attempt, without the announcement (already delivered).
enum SaveResult: Sendable {
    case nothing, busy, saved
    case settling(Duration)
}

/// The continuations of ``SettingsStore/persistenceUpdates``.
struct StatusListeners: Sendable {
    var continuations: [Int: AsyncStream<SettingsStore.PersistenceStatus>.Continuation] = [:]
    var next = 0
}

/// What the autosave of a store is doing.
struct AutosaveState {
    /// Whether the current run of failures was reported (a failure is reported once, until a save succeeds).
    var failureReported = false
    /// Whether waiting for another process's lock was reported in the current run.
    var lockReported = false
}

/// The bound on how long a flush waits for another process.
struct Deadline {
    let start = ContinuousClock.now
    let limit: Duration
    let path: String

    init(_ store: SettingsStore) {
        limit = (store.persistence?.lockTimeout ?? .seconds(2)) + (store.persistence?.settleDelay ?? .zero) * 2
        path = store.url?.path ?? "?"
    }

    /// Throws once the limit has passed; `lock` (the lock file to name, `nil` when the file was
    /// settling rather than locked) is worked out only then, not at every retry.
    func check(lockedBy lock: @autoclosure () -> String?) throws(SettingsError) {
        guard ContinuousClock.now - start > limit else { return }
        if let lock = lock() {
            throw SettingsError(.fileLocked, path: path, detail: "another process held the lock \(lock) for longer than \(limit); not saved, the changes are kept and saved later")
        }
        throw SettingsError(.invalidFile, path: path, detail: "the file kept changing into something malformed for longer than \(limit); not saved, the changes are kept")
    }
}

extension SettingsFile {
    /// The lock file beside the settings file at `path` (through symbolic links).
    static func lockPath(for path: String) -> String {
        PlistFile.lockPath(for: (try? PlistFile.target(of: path).path) ?? path)
    }
}

/// Sleeps the calling thread (only where blocking is allowed: synchronous flushes).
private func pauseThread(for duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

extension SettingsStore.State {
    /// Records a changed user key and, when the store just gained unsaved changes, keeps it alive
    /// (in ``PendingSaves``) until they are saved.
    mutating func markDirtyKeepingAlive(_ key: SettingsKey, store: SettingsStore) {
        if markDirty(key) { PendingSaves.add(store) }
    }
}

extension SettingsStore {
    /// Reads the file at first use, on the store's executor; the caller waits (once).
    nonisolated func loadFile() {
        guard persistence != nil else { return }
        executor.runAndWait { self.assumeIsolated { $0.loadIfNeeded() } }
    }

    /// Runs `body` isolated to the store on its executor thread and waits for it (inline when
    /// already there).
    nonisolated func onExecutor<T: Sendable, E: Error>(
        _ body: @escaping @Sendable (isolated SettingsStore) throws(E) -> T
    ) throws(E) -> T {
        let result: Result<T, E> = executor.run {
            self.assumeIsolated { store in Result { () throws(E) -> T in try body(store) } }
        }
        return try result.get()
    }

    /// Loads the file if that was not done yet (isolated form of ``ensureLoaded()``).
    func loadIfNeeded() {
        guard !loaded.load(ordering: .acquiring), var file else { return }
        file.onLockAcquired = { [weak self] in self?.saveSoon() }
        file.history = history  // history hook: provenance published for provenance(of:)
        let values = file.load()
        let diagnostics = file.diagnostics
        file.diagnostics = []
        self.file = file
        storage.locked { s in
            s.modify(.user) { $0 = values }
            s.tracksChanges = true
            s.autosaves = persistence?.autosaveDelay != nil
        }
        publishStatus()
        generationCounter.add(1, ordering: .releasing)
        loaded.store(true, ordering: .releasing)
        diagnostics.forEach(report)
        startWatchingSoon()
    }

    /// Copies the file's findings where ``persistenceStatus`` reads them without waiting.
    func publishStatus(saveError: SettingsError?? = nil, settling: Bool = false) {
        guard let file else { return }
        var current = status.locked { s in
            s.fileWrites = file.writes
            s.reloads = file.reloads
            s.movedAside = file.movedAside
            s.loadError = file.loadError
            s.format = file.format
            s.waitingForFileToSettle = settling
            if let saveError { s.lastSaveError = saveError }
            return s
        }
        let listeners = statusListeners.locked { Array($0.continuations.values) }
        guard !listeners.isEmpty else { return }
        current.hasUnsavedChanges = storage.locked { !$0.dirty.isEmpty }
        for listener in listeners { listener.yield(current) }
    }

    /// Delivers what the file collected, now that no lock is held.
    func deliverFileDiagnostics() {
        guard let pending = file?.diagnostics, !pending.isEmpty else { return }
        file?.diagnostics = []
        pending.forEach(report)
    }

    /// One save attempt: saves pending changes if the lock is free and the file is usable.
    func saveOnce() throws(SettingsError) -> SaveResult {
        loadIfNeeded()
        guard var file else { return .nothing }
        let hasChanges = storage.locked { !$0.dirty.isEmpty }
        let step: SettingsFile.SaveStep<Announcement?>
        do {
            step = try file.save(
                hasChanges: hasChanges,
                snapshot: { storage.locked { s in (s[.user], s.takeDirty()) } },
                restore: { keys in storage.locked { s in s.restoreDirty(keys) } },
                reconcile: { contents in adopt(contents) }
            )
        } catch {
            self.file = file
            publishStatus(saveError: .some(error))
            deliverFileDiagnostics()
            throw error
        }
        self.file = file
        switch step {
        case .nothing:
            releaseIfClean()
            return .nothing
        case .busy:
            return .busy
        case .settling(let wait):
            publishStatus(settling: true)
            deliverFileDiagnostics()
            return .settling(wait)
        case .saved(let announcement):
            publishStatus(saveError: .some(nil))
            releaseIfClean()
            deliverFileDiagnostics()
            announcement?.deliver(in: self)
            return .saved
        }
    }

    /// Lets the store go from ``PendingSaves`` when it has no unsaved changes.
    nonisolated func releaseIfClean() {
        storage.locked { s in
            guard s.pending, s.dirty.isEmpty else { return }
            s.pending = false
            PendingSaves.remove(self)
        }
    }

    /// Reports that the store's persistence thread could not be started (its work runs on a
    /// borrowed Dispatch worker meanwhile; see ``PersistenceExecutor``).
    nonisolated func reportThreadFailure(_ error: Int32) {
        let reason = String(cString: strerror(error))
        report(SettingsDiagnostic(.fileError, "\(url?.path ?? "?"): cannot start the settings persistence thread (\(reason)); the file is loaded and saved on a shared worker thread until one can be started"))
    }

    /// Starts a save after the autosave delay (once per burst of changes).
    nonisolated func scheduleSave() {
        guard persistence?.autosaveDelay != nil else { return }
        Task { await self.runAutosave() }  // holds the store until its changes are saved
    }

    /// Waits for the autosave delay, then saves; retries with backoff while the lock is busy or
    /// the save fails, reporting a failure once; ends when nothing is left to save.
    func runAutosave() async {
        guard let options = persistence, let delay = options.autosaveDelay else { return }
        try? await Task.sleep(for: delay)
        var backoff = Duration.milliseconds(100)
        var busySince: ContinuousClock.Instant?
        while true {
            var pause = delay
            do {
                switch try saveOnce() {
                case .nothing, .saved:
                    autosave = AutosaveState()
                    busySince = nil
                    backoff = .milliseconds(100)
                    let done = storage.locked { s -> Bool in
                        guard s.dirty.isEmpty else { return false }
                        s.saveScheduled = false
                        return true
                    }
                    if done { return }
                case .busy:
                    let since = busySince ?? ContinuousClock.now
                    busySince = since
                    if !autosave.lockReported, ContinuousClock.now - since > options.lockTimeout {
                        autosave.lockReported = true
                        report(SettingsDiagnostic(.fileError, "\(url?.path ?? "?"): another process has held the lock \(file?.target.lock ?? "?") for more than \(options.lockTimeout); the changes are kept and saving is retried"))
                    }
                    pause = min(backoff, .milliseconds(200))
                    backoff = min(backoff * 2, .seconds(5))
                case .settling(let wait):
                    pause = wait
                }
            } catch {
                if !autosave.failureReported {
                    autosave.failureReported = true
                    report(SettingsDiagnostic(.fileError, "\(error); retrying"))
                }
                pause = backoff
                backoff = min(backoff * 2, .seconds(5))
            }
            try? await Task.sleep(for: pause)
        }
    }

    /// Tries a save on the store's thread as soon as it is free (called when a ``LockWaiter``
    /// got the lock another process held).
    nonisolated func saveSoon() {
        executor.schedule(after: .zero) { [weak self] in
            self?.assumeIsolated { store in _ = try? store.saveOnce() }
        }
    }

    /// Looks at the file and, when another process or a person changed it, reloads it and
    /// announces the keys whose effective values changed. Called by the file watcher.
    func reloadIfChanged() {
        guard loaded.load(ordering: .acquiring), var file else { return }
        let announcement = file.reloadIfChanged(reconcile: { adopt($0) })
        self.file = file
        publishStatus()
        deliverFileDiagnostics()
        (announcement ?? nil)?.deliver(in: self, origin: .externalFile)
    }

    /// Starts watching the file for changes made elsewhere a moment after it was loaded: a
    /// program that reads a value and exits never pays for a watch (an inotify instance makes
    /// the kernel wait several milliseconds at exit). Changes made before the watch starts are
    /// found when it does.
    func startWatchingSoon() {
        guard let mode = persistence?.externalChanges, mode != .ignored else { return }
        executor.schedule(after: .milliseconds(150)) { [weak self] in
            self?.assumeIsolated { $0.startWatching(mode) }
        }
    }

    func startWatching(_ mode: ExternalChanges) {
        reloadIfChanged()
        switch mode {
        case .automatic:
            guard let path = file?.target.path else { return }
            FileWatcher.shared.watch(self, path: path, pollingInterval: .seconds(1))
        case .polling(let interval): FileWatcher.shared.poll(self, every: interval)
        case .ignored: break
        }
    }

    /// A change to announce once the locks are released.
    struct Announcement {
        var changed: [SettingsKey]
        var keyPaths: TrackedKeyPaths
        var observing: Bool
        /// The user layer's changed leaves, for user-layer observers.
        var userChanges: [SettingsKey] = []

        func deliver(in store: SettingsStore, origin: SettingsChange.Origin = .externalFile) {
            store.announce(keyPaths)
            if observing { store.publish(changed, origin: origin) }
            store.observers.publishUserLayer(userChanges, origin: origin)
        }
    }

    /// Makes the user layer what the file holds, with this process's unsaved changes on top.
    /// Returns what to announce once no lock is held.
    nonisolated func adopt(_ contents: PlistDictionary) -> Announcement? {
        let result = storage.locked { s -> Announcement? in
            let observing = observers.isActive
            var user = contents
            for key in s.dirty {
                _ = user.setValue(s[.user].value(at: key.components), at: key.components[...])
            }
            guard user != s[.user] else { return nil }
            let before = s
            s.modify(.user) { $0 = user }
            let userChanges = observers.watchesUserLayer ? user.changedLeafPaths(from: before[.user]) : []
            guard observing || !s.tracked.isEmpty else {
                return Announcement(changed: [], keyPaths: TrackedKeyPaths(), observing: false, userChanges: userChanges)
            }
            let changed = s.effectiveChanges(from: before, in: .user)
            return Announcement(changed: changed, keyPaths: s.trackedKeyPaths(for: .keys(changed), writing: SettingsKey(components: [])),
                                observing: observing, userChanges: userChanges)
        }
        if result != nil { generationCounter.add(1, ordering: .releasing) }
        return result
    }
}

/// The type mismatch last reported for a key: the message and the value it was about.
struct ReportedMismatch: Equatable, Sendable {
    let message: String
    let value: PlistValue?
}

/// A store's diagnostics handler, held in a struct so reading it never re-abstracts (and wraps)
/// the stored function (see ``SettingsStore/diagnosticsHandlerBox``).
struct DiagnosticsHandlerSlot: Sendable {
    let call: (@Sendable (SettingsDiagnostic) -> Void)?
}
