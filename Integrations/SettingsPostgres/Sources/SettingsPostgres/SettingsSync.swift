public import Foundation
public import Logging
public import Observation
public import ServiceLifecycle
public import Settings
import SettingsPlist
import SettingsFiles
import Synchronization

/// Syncs the user layer of a file-backed ``Settings/SettingsStore`` with other devices through a
/// PostgreSQL server: local-first (the plist file stays the truth offline), per-leaf
/// last-writer-wins ordered by (hybrid logical clock, device id), deletes as tombstones, defaults
/// never synced. Remote changes reach the store's observers with origin `.sync`.
///
/// ```swift
/// let sync = try SettingsSync.postgres(
///     url: "postgres://ada@db.example.com/settings?sslmode=require",
///     password: ProcessInfo.processInfo.environment["SETTINGS_DB_PASSWORD"],
///     store: .shared, app: "com.example.notes", scope: .excluding(["Window"]))
/// Task { await sync.run() }                 // offline-tolerant; returns after stop()
/// Task { for await c in sync.conflicts { print(c) } }
/// try await sync.synchronize()              // until up to date, or throws .offline
/// ```
///
/// It is a swift-service-lifecycle `Service`: in a `ServiceGroup`, ``run()`` returns after a
/// graceful shutdown once pending pushes are sent (or after 5 s).
///
/// Each user is a PostgreSQL login role (``SettingsSyncAdmin/addUser(_:password:connectionLimit:)``); the space
/// is (that role, `app`), chosen by the server: a device sees and changes only its user's settings.
///
/// One process per settings file syncs (an exclusive lock on `.settings.sync.lock` beside it);
/// others stay in ``SettingsSyncStatus/standby`` and take over within about 500 ms of its exit.
/// The durable sync state lives in `settings.sync.plist` beside the settings file.
public final class SettingsSync: Sendable, Observable, Service {
    /// The store whose user layer syncs.
    public let store: SettingsStore
    /// The app id: with the login role of the connection, the space on the server that this user's devices share.
    public let app: String
    /// Which keys sync.
    public let scope: SettingsSyncScope
    /// What happens to secret keys.
    public let secrets: SettingsSyncSecrets
    /// Where the sync logs (connections, cycles, problems).
    public let logger: Logger

    /// This machine's clock (unix ms), plus a skew tests set to fake a wrong clock.
    func localNowMs() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded()) + clockSkewMs.withLock { $0 }
    }

    let clockSkewMs = Mutex<Int64>(0)
    /// Where the machine id is read (tests point it elsewhere).
    let machineIDFile = Mutex(URL(filePath: "/etc/machine-id"))

    /// A digest of this machine's id, or `nil` when there is none to read.
    func machineID() -> String? {
        let url = machineIDFile.withLock { $0 }
        guard let bytes = try? PlistFile.read(url.path, limit: 4096)?.bytes, !bytes.isEmpty else { return nil }
        return String(UInt64(bitPattern: LeafDigest.of(bytes: bytes)), radix: 16)
    }

    /// The server; tests may point a running sync elsewhere (a closed port: a real refused connection).
    let serverURL: Mutex<PostgresURL>
    var server: PostgresURL { serverURL.withLock { $0 } }
    let settingsURL: URL
    private let registrar = ObservationRegistrar()
    let shared = Mutex(Shared())

    struct Shared {
        var status: SettingsSyncStatus = .stopped
        var device: UUID?
        var running = false
        var finished = false
        var stopped = false
        var task: Task<Void, Never>?
        var events: AsyncStream<SyncEvent>.Continuation?
        var inbox = Inbox()
        var subscribers = Subscribers()
    }

    /// What wakes the engine, and who waits for it.
    struct Inbox {
        var wake: SyncWake = []
        var tickQueued = false
        var notifyQueued = false
        /// The greatest change number announced since the engine last took it.
        var notified: Int64 = 0
        /// Changed leaves and when they changed (unix ms, this machine's clock).
        var dirty: [SettingsKey: Int64] = [:]
        var requested = 0
        var waiters: [(ticket: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    /// The streams' readers, and what was reported to them.
    struct Subscribers {
        var next = 0
        var conflictCount = 0
        var problemCount = 0
        var status: [Int: AsyncStream<SettingsSyncStatus>.Continuation] = [:]
        var conflicts: [Int: AsyncStream<SettingsSyncConflict>.Continuation] = [:]
        var problems: [Int: AsyncStream<SettingsSyncError>.Continuation] = [:]
    }

    /// Creates a sync of `store` through the PostgreSQL server at `url`. Nothing connects until
    /// ``run()``.
    ///
    /// ```swift
    /// let sync = try SettingsSync.postgres(
    ///     url: "postgres://settings@127.0.0.1:5432/settings", password: "secret",
    ///     store: .file(url), app: "com.example.notes")
    /// ```
    ///
    /// - Parameters:
    ///   - url: `postgres://user[:password]@host[:port]/database[?sslmode=require]`. A host other
    ///     than loopback (`127.x.x.x`, `::1`, `localhost`) needs `sslmode=require` (or
    ///     `verify-ca`/`verify-full`): the connection then uses TLS with full certificate
    ///     verification. Loopback hosts connect without TLS unless `sslmode=require`.
    ///   - password: the password; overrides one in the URL.
    ///   - store: a file-backed store (``Settings/SettingsStore/file(_:format:autosaveDelay:externalChanges:options:)``
    ///     or `.shared`).
    ///   - app: the app id, 1–200 bytes without control characters; with the user's role it
    ///     names the space on the server.
    ///   - scope: which keys sync (default all).
    ///   - secrets: what happens to secret keys (default ``SettingsSyncSecrets/notSynced``: they stay here).
    ///   - logger: where the sync logs (default: nowhere).
    /// - Throws: ``SettingsSyncError/invalidURL(_:)``, ``SettingsSyncError/tlsRequired(host:)``,
    ///   ``SettingsSyncError/invalidApp(_:)``, ``SettingsSyncError/invalidSecretKey(bits:)``.
    public static func postgres(
        url: String, password: String? = nil, store: SettingsStore, app: String, scope: SettingsSyncScope = .all,
        secrets: SettingsSyncSecrets = .notSynced,
        logger: Logger = Logger(label: "SettingsPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(SettingsSyncError) -> SettingsSync {
        guard (1...200).contains(app.utf8.count), !app.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else { throw .invalidApp(app) }
        let server = try PostgresURL(url, password: password)
        guard let file = store.url else { throw .invalidURL("the store has no file: sync needs SettingsStore.file(_:)") }
        if let bytes = secrets.keyBytes, bytes.count != 32 { throw .invalidSecretKey(bits: bytes.count * 8) }
        return SettingsSync(store: store, app: app, scope: scope, secrets: secrets, logger: logger, server: server, settingsURL: file)
    }

    init(store: SettingsStore, app: String, scope: SettingsSyncScope, secrets: SettingsSyncSecrets, logger: Logger, server: PostgresURL, settingsURL: URL) {
        self.store = store
        self.app = app
        self.scope = scope
        self.secrets = secrets
        self.logger = logger
        self.serverURL = Mutex(server)
        self.settingsURL = settingsURL
    }



    /// Where the durable sync state is kept: `settings.sync.plist` beside `settings.plist`.
    public var stateFileURL: URL {
        let name = settingsURL.deletingPathExtension().lastPathComponent
        return settingsURL.deletingLastPathComponent().appending(path: "\(name).sync.plist")
    }

    /// The lock file that elects the one syncing process: `.settings.sync.lock`.
    public var lockFileURL: URL {
        let name = settingsURL.deletingPathExtension().lastPathComponent
        return settingsURL.deletingLastPathComponent().appending(path: ".\(name).sync.lock")
    }

    // MARK: Running

    /// Syncs until ``stop()`` is called or the calling task is cancelled: waits for the file's
    /// sync lock (``SettingsSyncStatus/standby``), connects, catches up, pushes local changes and
    /// applies remote ones as they come, reconnecting with backoff (100 ms doubling to 2 s, ±20 %)
    /// whenever the server is unreachable. Local changes are kept meanwhile. Calling it a second
    /// time, or after ``stop()``, returns at once.
    ///
    /// ```swift
    /// let task = Task { await sync.run() }
    /// ```
    public func run() async {
        let (stream, continuation) = AsyncStream<SyncEvent>.makeStream()
        let start = shared.withLock { s -> Bool in
            guard !s.running, !s.stopped else { return false }
            s.running = true
            s.events = continuation
            return true
        }
        guard start else { return }
        let task = Task { [self] in
            let engine = SyncEngine(sync: self, events: stream)
            await engine.run()
        }
        let stoppedMeanwhile = shared.withLock { s in
            s.task = task
            return s.stopped
        }
        if stoppedMeanwhile { task.cancel() }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
        } onGracefulShutdown: { [self] in
            drainThenStop()
        }
        setStatus(.stopped)
        let (waiters, subs) = shared.withLock { s in
            s.stopped = true
            s.finished = true
            s.events?.finish()
            s.events = nil
            defer { s.inbox.waiters = []; s.subscribers.status = [:]; s.subscribers.conflicts = [:]; s.subscribers.problems = [:] }
            return (s.inbox.waiters, (Array(s.subscribers.status.values), Array(s.subscribers.conflicts.values), Array(s.subscribers.problems.values)))
        }
        for w in waiters { w.continuation.resume(throwing: SettingsSyncError.notRunning) }
        subs.0.forEach { $0.finish() }
        subs.1.forEach { $0.finish() }
        subs.2.forEach { $0.finish() }
    }

    /// Graceful shutdown: pending pushes are sent (at most 5 s), then ``stop()``.
    func drainThenStop() {
        let timer = Task { [self] in
            do { try await Task.sleep(for: .seconds(5)) } catch { return }
            stop()
        }
        Task { [self] in
            try? await synchronize()
            timer.cancel()
            stop()
        }
    }

    /// Stops ``run()``: closes the connection and releases the sync lock; streams finish.
    ///
    /// ```swift
    /// sync.stop()
    /// ```
    public func stop() {
        let task = shared.withLock { s in
            s.stopped = true
            return s.task
        }
        task?.cancel()
    }

    /// Returns when every local change made before the call is on the server and every change on
    /// the server as of the call is applied (and durable) here.
    ///
    /// ```swift
    /// store["theme"] = "dark"
    /// try await sync.synchronize()
    /// ```
    ///
    /// - Throws: ``SettingsSyncError/offline(reason:)`` when the server cannot be reached now (the
    ///   change is still pushed when it can); ``SettingsSyncError/standby`` when another process
    ///   syncs this file; ``SettingsSyncError/notRunning`` when ``run()`` is not running.
    public func synchronize() async throws(SettingsSyncError) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let failure = shared.withLock { s -> SettingsSyncError? in
                    guard s.running, !s.stopped else { return .notRunning }
                    switch s.status {
                    case .offline(let reason): return .offline(reason: reason)
                    case .standby: return .standby
                    default: break
                    }
                    s.inbox.requested += 1
                    s.inbox.waiters.append((s.inbox.requested, continuation))
                    return nil
                }
                if let failure { continuation.resume(throwing: failure) } else { signal(.sync) }
            }
        } catch let error as SettingsSyncError {
            throw error
        } catch {
            throw .notRunning
        }
    }

    // MARK: Observing

    /// What the sync is doing now. Observable (`withObservationTracking`, SwiftUI).
    ///
    /// ```swift
    /// if case .offline(let reason) = sync.status { print("offline:", reason) }
    /// ```
    public var status: SettingsSyncStatus {
        registrar.access(self, keyPath: \.status)
        return shared.withLock { $0.status }
    }

    /// This device's id (its writes carry it); `nil` until ``run()`` has read the sync state.
    public var device: UUID? {
        shared.withLock { $0.device }
    }

    /// The current status, then every change of it, until the sync stops.
    ///
    /// ```swift
    /// for await status in sync.statusUpdates { print("sync:", status) }
    /// ```
    public var statusUpdates: AsyncStream<SettingsSyncStatus> {
        let (stream, continuation) = AsyncStream<SettingsSyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = shared.withLock { s -> Int? in
            continuation.yield(s.status)
            guard !s.finished else { return nil }
            s.subscribers.next += 1
            s.subscribers.status[s.subscribers.next] = continuation
            return s.subscribers.next
        }
        if let id {
            continuation.onTermination = { [weak self] _ in self?.shared.withLock { _ = $0.subscribers.status.removeValue(forKey: id) } }
        } else {
            continuation.finish()
        }
        return stream
    }

    /// Conflicts from now on: a key written on two devices concurrently, where the older write
    /// (smaller (hlc, device)) was lost on every device.
    ///
    /// ```swift
    /// Task { for await c in sync.conflicts { log(c.description) } }
    /// ```
    public var conflicts: AsyncStream<SettingsSyncConflict> {
        subscribe(\.subscribers.conflicts)
    }

    /// Problems from now on that stop nothing: leaves over a limit (``SettingsSyncError/keyTooLong(key:bytes:components:)``,
    /// ``SettingsSyncError/valueTooLarge(key:bytes:limit:)``, ``SettingsSyncError/tooManyKeys(key:count:limit:)``:
    /// kept local, reported once per value), skipped server rows (``SettingsSyncError/badRow(key:seq:reason:)``,
    /// ``SettingsSyncError/secretRefused(key:seq:reason:)``, reported once), secret changes held
    /// back (``SettingsSyncError/secretHeldBack(key:reason:)``) and, at start, keys that sync in
    /// clear but look secret (``SettingsSyncError/looksSecret(key:)``, also logged as a warning).
    ///
    /// ```swift
    /// Task { for await problem in sync.problems { log(problem.description) } }
    /// ```
    public var problems: AsyncStream<SettingsSyncError> {
        subscribe(\.subscribers.problems)
    }

    /// A stream of the events sent to the subscribers at `list` from now on (the newest 10,000
    /// kept for a slow reader); it leaves the list when its reader stops.
    private func subscribe<Event: Sendable>(
        _ list: any WritableKeyPath<Shared, [Int: AsyncStream<Event>.Continuation]> & Sendable
    ) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let id = shared.withLock { s in
            s.subscribers.next += 1
            s[keyPath: list][s.subscribers.next] = continuation
            return s.subscribers.next
        }
        continuation.onTermination = { [weak self] _ in self?.shared.withLock { _ = $0[keyPath: list].removeValue(forKey: id) } }
        return stream
    }

    // MARK: Engine side

    func setStatus(_ new: SettingsSyncStatus) {
        let changed = shared.withLock { s in s.status != new }
        guard changed else { return }
        registrar.withMutation(of: self, keyPath: \.status) {
            let subs = shared.withLock { s in
                s.status = new
                return Array(s.subscribers.status.values)
            }
            for c in subs { c.yield(new) }
        }
    }

    func report(_ conflict: SettingsSyncConflict) {
        let subs = shared.withLock { s in
            s.subscribers.conflictCount += 1
            return Array(s.subscribers.conflicts.values)
        }
        for c in subs { c.yield(conflict) }
    }

    func report(_ problem: SettingsSyncError) {
        let subs = shared.withLock { s in
            s.subscribers.problemCount += 1
            return Array(s.subscribers.problems.values)
        }
        for c in subs { c.yield(problem) }
    }

    func signal(_ reason: SyncWake) {
        let continuation = shared.withLock { s -> AsyncStream<SyncEvent>.Continuation? in
            let first = s.inbox.wake.isEmpty
            s.inbox.wake.insert(reason)
            return first ? s.events : nil
        }
        continuation?.yield(.wake)
    }

    /// Records local changes with the time they happened: their clocks are stamped from it, so
    /// an edit made while offline or while the engine was busy keeps its place in time.
    func noteLocal(_ keys: [SettingsKey], keepingEarlier: Bool = false) {
        let now = localNowMs()
        let continuation = shared.withLock { s -> AsyncStream<SyncEvent>.Continuation? in
            for key in keys {
                if keepingEarlier, s.inbox.dirty[key] != nil { continue }
                s.inbox.dirty[key] = now
            }
            let first = s.inbox.wake.isEmpty
            s.inbox.wake.insert(.local)
            return first ? s.events : nil
        }
        continuation?.yield(.wake)
    }

    /// Why the engine was woken, and the local changes since (key: when it changed, unix ms).
    struct Wake {
        var reasons: SyncWake
        var dirty: [SettingsKey: Int64]
    }

    func takeWake() -> Wake {
        shared.withLock { s in
            defer { s.inbox.wake = []; s.inbox.dirty = [:] }
            return Wake(reasons: s.inbox.wake, dirty: s.inbox.dirty)
        }
    }

    /// How many pulls ran, and notifications arrived (for tests: a flood of notifications costs one pull).
    let pullCount = Atomic<Int>(0)
    let notificationCount = Atomic<Int>(0)

    /// How many conflicts and problems were reported so far (for tests).
    var reportedCounts: (conflicts: Int, problems: Int) { shared.withLock { ($0.subscribers.conflictCount, $0.subscribers.problemCount) } }

    /// Queues a tick unless one is waiting: ticks never pile up while the engine is offline.
    func queueTick() -> Bool {
        let continuation = shared.withLock { s -> AsyncStream<SyncEvent>.Continuation? in
            guard let events = s.events else { return nil }
            if s.inbox.tickQueued { return events }
            s.inbox.tickQueued = true
            events.yield(.tick)
            return events
        }
        return continuation != nil
    }

    func tickConsumed() { shared.withLock { $0.inbox.tickQueued = false } }

    /// Notes an announced change number; returns whether to queue a notification event (none is
    /// waiting): a flood of notifications costs one pull.
    func queueNotify(_ payload: String) -> Bool {
        notificationCount.add(1, ordering: .relaxed)
        // The server announces change numbers only: anything else was forged, and costs nothing.
        guard let seq = Int64(payload), seq > 0 else { return false }
        return shared.withLock { s in
            s.inbox.notified = max(s.inbox.notified, seq)
            defer { s.inbox.notifyQueued = true }
            return !s.inbox.notifyQueued
        }
    }

    /// The greatest change number announced since the last call; the next notification queues an event.
    func takeNotified() -> Int64 {
        shared.withLock { s in
            defer { s.inbox.notifyQueued = false; s.inbox.notified = 0 }
            return s.inbox.notified
        }
    }

    var requestedRounds: Int { shared.withLock { $0.inbox.requested } }

    func completeRounds(upTo ticket: Int) {
        let done = shared.withLock { s in
            let done = s.inbox.waiters.filter { $0.ticket <= ticket }
            s.inbox.waiters.removeAll { $0.ticket <= ticket }
            return done
        }
        for w in done { w.continuation.resume() }
    }

    func failWaiters(_ error: SettingsSyncError) {
        let all = shared.withLock { s in
            defer { s.inbox.waiters = [] }
            return s.inbox.waiters
        }
        for w in all { w.continuation.resume(throwing: error) }
    }

    func setDevice(_ id: UUID) { shared.withLock { $0.device = id } }

    var isStopped: Bool { shared.withLock { $0.stopped } }
}

/// Why the engine was woken.
struct SyncWake: OptionSet, Sendable {
    let rawValue: Int
    static let local = SyncWake(rawValue: 1)
    static let sync = SyncWake(rawValue: 2)
}

/// What the engine waits for.
enum SyncEvent: Sendable {
    case wake
    case listening(Int)
    case notify(Int)
    case lost(Int, String)
    case tick
}
