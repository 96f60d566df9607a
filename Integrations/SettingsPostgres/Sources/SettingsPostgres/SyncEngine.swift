import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization

/// A failure that ends a connection.
struct SyncConnectionError: Error, CustomStringConvertible {
    var description: String
}

/// The sync loop of one ``SettingsSync/run()``. Not shared: only the run task touches it.
final class SyncEngine {
    let sync: SettingsSync
    let store: SettingsStore
    var events: AsyncStream<SyncEvent>.Iterator
    let storage: SyncStateStorage
    var state: SyncStateFile
    var generation = 0
    var reportedRows: Set<String> = []
    var reportedLimits: Set<String> = []
    var lastCheckIn = ContinuousClock.now - .seconds(3600)
    /// Stored sizes of leaves by path, valid while the digest matches (the space total).
    var sizes: [String: (digest: Int64, size: Int)] = [:]
    /// Paths known to be secret or not (``isSecret(_:)``).
    var secretPaths: [String: Bool] = [:]
    /// During a full download after a purge: synced leaves not (yet) seen in it.
    var resyncUnseen: Set<String>?
    let logger: Logger

    init(sync: SettingsSync, events: AsyncStream<SyncEvent>) {
        self.sync = sync
        self.store = sync.store
        self.events = events.makeAsyncIterator()
        self.storage = SyncStateStorage(url: sync.stateFileURL)
        self.logger = sync.logger
        self.state = SyncStateFile(app: sync.app, device: UUID())
    }

    var me: UUID { state.device }

    // MARK: Clock

    var nowMs: Int64 { sync.localNowMs() + state.clockOffsetMs }

    /// A new write's clock: `max(last + 1, now << 16)`, or from the time the change happened
    /// (`unixMs`, this machine's clock, corrected by the server offset).
    func tick(at unixMs: Int64? = nil) -> Int64 {
        let ms = unixMs.map { $0 + state.clockOffsetMs } ?? nowMs
        let next = max(state.lastHLC + 1, ms << 16)
        state.lastHLC = next
        return next
    }

    func receive(_ hlc: Int64) {
        state.lastHLC = max(state.lastHLC, hlc)
    }

    // MARK: Run

    func run() async {
        // 1. One syncing process per file.
        var fileLock: PlistFile.Lock?
        while !Task.isCancelled {
            do {
                fileLock = try SyncFileLock.tryAcquire(sync.lockFileURL)
                if fileLock != nil { break }
                sync.setStatus(.standby)
                sync.failWaiters(.standby)
            } catch {
                let reason = "\(error)"
                sync.setStatus(.offline(reason: reason))
                sync.failWaiters(.offline(reason: reason))
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        guard let fileLock else { return }
        defer { fileLock.release() }
        sync.setStatus(.connecting)

        // 2. Hear every local change from now on, then read the state and compare with the file.
        let observation = store.onUserLayerChange { [weak sync] change in
            guard change.origin != .sync, let sync else { return }
            sync.noteLocal(change.keys)
        }
        defer { observation.cancel() }
        await loadState()
        sync.setDevice(state.device)
        reconcileApplying()
        processDirty([:], full: true)
        try? await saveState()

        // 3. A tick every second drives keep-alives and timeouts.
        let ticker = Task { [weak sync] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let sync, sync.queueTick() else { return }
            }
        }
        defer { ticker.cancel() }

        // 4. Connect, sync, reconnect with backoff.
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            sync.setStatus(.connecting)
            do {
                try await session { backoff = .milliseconds(100) }
            } catch {
                logger.info("session ended: \(Self.describe(error))")
                if Task.isCancelled { break }
                let reason = Self.describe(error)
                sync.setStatus(.offline(reason: reason))
                sync.failWaiters(.offline(reason: reason))
            }
            let jitter = Double.random(in: 0.8...1.2)
            try? await Task.sleep(for: backoff * jitter)
            backoff = min(backoff * 2, .seconds(2))
        }
    }

    func loadState() async {
        let storage = self.storage
        let loaded: SyncStateFile? = try? await BlockingIO.run { try storage.load() }
        let machine = sync.machineID()
        defer { state.machine = machine }
        guard let loaded, loaded.format == 1 else { return }
        if loaded.app == sync.app {
            state = loaded
        } else {
            state = SyncStateFile(app: sync.app, device: loaded.device)  // another space: start over
        }
        // A configuration directory copied to another machine: that machine is a new device.
        if let was = loaded.machine, let machine, was != machine {
            let old = state.device
            state.device = UUID()
            for (path, reg) in state.leaves where reg.device == old && reg.state == .pending {
                state.leaves[path]?.device = state.device
            }
            logger.info("machine id changed: new device id \(state.device)")
        }
    }

    func saveState() async throws {
        let storage = self.storage, snapshot = state
        try await BlockingIO.run { try storage.save(snapshot) }
    }

    // MARK: Local changes

    /// `applying` leaves left by a crash: applied (the value is the target's), not applied (the
    /// value is the previous one: the row is pulled again, since the cursor did not move), or
    /// edited since (pending).
    func reconcileApplying() {
        for (path, reg) in state.leaves where reg.state == .applying {
            let current = LeafDigest.of(leafValue(SettingsKey(path)))
            if current == reg.digest {
                state.leaves[path] = LeafRegister(hlc: reg.hlc, device: reg.device, digest: reg.digest, state: .synced)
            } else if current == reg.prevDigest, let h = reg.prevHLC, let d = reg.prevDevice, let s = reg.prevState {
                if reg.prevExists == false {
                    state.leaves[path] = nil
                } else {
                    state.leaves[path] = LeafRegister(hlc: h, device: d, digest: reg.prevDigest, state: s)
                }
            } else {
                state.leaves[path] = LeafRegister(hlc: tick(), device: me, digest: current, state: .pending)
            }
        }
    }

    /// The user-layer value of a leaf; a dictionary there counts as absent.
    func leafValue(_ key: SettingsKey) -> PlistValue? {
        let v = store.value(for: key, in: .user)
        if case .dictionary = v { return nil }
        return v
    }

    /// Compares the changed keys (stamped with the time they changed) and, when `full`, every
    /// user-layer leaf and every known leaf, with their registers: a changed digest makes the
    /// leaf pending with a fresh clock.
    func processDirty(_ changed: [SettingsKey: Int64], full: Bool) {
        func check(_ key: SettingsKey, _ value: PlistValue?, at unixMs: Int64?) {
            guard sync.scope.includes(key), sync.secrets.keyBytes != nil || !isSecret(key) else { return }
            let digest = LeafDigest.of(value)
            if let reg = state.leaves[key.path] {
                if reg.state == .applying || reg.digest == digest { return }
            } else if digest == nil {
                return
            }
            state.leaves[key.path] = LeafRegister(hlc: tick(at: unixMs), device: me, digest: digest, state: .pending)
        }
        for (key, ms) in changed.sorted(by: { $0.value < $1.value }) { check(key, leafValue(key), at: ms) }
        guard full else { return }
        var seen: Set<String> = []
        forEachLeaf(store.contents(of: .user)) { key, value in
            seen.insert(key.path)
            check(key, value, at: nil)
        }
        // A settings file that could not be read looks empty: its leaves did not vanish, so
        // they must not become deletions on every device.
        guard store.loadError == nil else { return }
        for path in state.leaves.keys where !seen.contains(path) {
            let key = SettingsKey(path)
            check(key, leafValue(key), at: nil)
        }
    }

    var hasPending: Bool { state.leaves.values.contains { $0.state == .pending } }

    // MARK: Connection

    func session(connected: () -> Void) async throws {
        generation += 1
        let gen = generation
        let conn = try await sync.server.connect(id: gen, logger: logger)
        do {
            try await withTaskCancellationHandler {
                try await connectedSession(conn, gen, connected: connected)
            } onCancel: {
                Self.closeNow(conn)
            }
        } catch {
            try? await conn.close()
            throw error
        }
        try? await conn.close()
    }

    func connectedSession(_ conn: PostgresConnection, _ gen: Int, connected: () -> Void) async throws {
        let logger = self.logger
        try await Self.timed(conn, .seconds(15), "schema") { try await Self.checkSchema(conn, logger) }
        let app = sync.app
        let channel = try await Self.timed(conn, .seconds(5), "open") {
            try await conn.query("SELECT channel FROM settings_sync_open(\(app))", logger: logger)
                .decode(String.self).reduce(into: "") { $0 = $1 }
        }
        let t0 = sync.localNowMs()
        let serverMs = try await Self.timed(conn, .seconds(5), "clock") {
            try await conn.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint", logger: logger)
                .decode(Int64.self).reduce(into: Int64(0)) { $0 = $1 }
        }
        let t1 = sync.localNowMs()
        let localMid = (t0 + t1) / 2
        state.clockOffsetMs = serverMs - localMid

        // LISTEN first: notifications sent while we were away are lost, so catch up after.
        guard let events = sync.shared.withLock({ $0.events }) else { throw CancellationError() }
        let listener = Self.listen(conn, channel, gen, events, sync)
        defer { listener.cancel() }
        let deadline = ContinuousClock.now + .seconds(5)
        waiting: while true {
            guard let event = await nextEvent() else { throw CancellationError() }
            switch event {
            case .listening(let g) where g == gen: break waiting
            case .lost(let g, let reason) where g == gen: throw SyncConnectionError(description: reason)
            case .tick where ContinuousClock.now > deadline:
                Self.closeNow(conn)
                throw SyncConnectionError(description: "LISTEN timed out")
            default: continue
            }
        }

        try await checkHorizon(conn)
        reconcileApplying()   // a failed apply (say, the settings file was locked) is settled now
        var ticket = sync.requestedRounds
        var wake = sync.takeWake()
        // The first session follows the start-up scan; the change callback has been on since.
        try await cycle(conn, dirty: wake.dirty, full: gen > 1)
        sync.completeRounds(upTo: ticket)
        sync.setStatus(.upToDate(seq: state.cursorSeq))
        connected()
        var lastActivity = ContinuousClock.now

        while true {
            guard let event = await nextEvent() else { throw CancellationError() }
            var pull = false
            var full = false
            switch event {
            case .notify(let g) where g == gen:
                if sync.takeNotified() > state.cursorSeq { pull = true }
            case .lost(let g, let reason) where g == gen:
                throw SyncConnectionError(description: reason)
            case .wake:
                ticket = sync.requestedRounds
                wake = sync.takeWake()
                if wake.reasons.contains(.sync) {
                    full = true
                } else if wake.reasons.contains(.local) {
                    // Debounce: a burst of writes becomes one push.
                    try await Task.sleep(for: .milliseconds(20))
                    let more = sync.takeWake()
                    wake.dirty.merge(more.dirty) { _, later in later }
                    if more.reasons.contains(.sync) { full = true; ticket = sync.requestedRounds }
                }
            case .tick:
                if ContinuousClock.now - lastActivity >= .seconds(15) {
                    _ = try await Self.timed(conn, .seconds(5), "keep-alive") {
                        try await conn.query("SELECT 1", logger: logger).decode(Int32.self).reduce(into: 0) { _, _ in }
                    }
                    lastActivity = ContinuousClock.now
                }
                continue
            default:
                continue
            }
            if full {
                try await cycle(conn, dirty: wake.dirty, full: true)
                sync.completeRounds(upTo: ticket)
            } else if pull {
                try await cycle(conn, dirty: [:], full: false)
            } else {
                try await cycle(conn, dirty: wake.dirty, full: false)
            }
            wake.dirty = [:]
            lastActivity = ContinuousClock.now
            sync.setStatus(.upToDate(seq: state.cursorSeq))
        }
    }

    func nextEvent() async -> SyncEvent? {
        let event = await events.next()
        switch event {
        case .tick: sync.tickConsumed()
        case .notify(let g) where g != generation: _ = sync.takeNotified()   // an old connection's: frees the slot
        default: break
        }
        return event
    }

    /// Local changes, pull to the end, push what is pending, pull again (our own push).
    func cycle(_ conn: PostgresConnection, dirty: [SettingsKey: Int64], full: Bool) async throws {
        logger.trace("cycle dirty=\(dirty.count)\(full ? " + all" : "")")
        processDirty(dirty, full: full)
        logger.trace("pull from \(state.cursorSeq)")
        try await pullAll(conn)
        if hasPending {
            logger.trace("push")
            let lastPush = try await pushAll(conn)
            if state.cursorSeq < lastPush {  // others pushed meanwhile: pull past our own rows
                logger.trace("pull after push from \(state.cursorSeq)")
                try await pullAll(conn)
            }
        }
        logger.trace("cycle done at \(state.cursorSeq)")
        if state.cursorSeq > 0, ContinuousClock.now - lastCheckIn > .seconds(60) {
            let logger = self.logger, app = sync.app, me = self.me, seq = state.cursorSeq
            _ = try await Self.timed(conn, .seconds(5), "check-in") {
                try await conn.query("SELECT settings_sync_check_in(\(app), \(me), \(seq))", logger: logger)
                return ()
            }
            lastCheckIn = .now
        }
    }

    /// A server reset (its change number behind our cursor) re-uploads; purged tombstones past
    /// our cursor mean a full download.
    func checkHorizon(_ conn: PostgresConnection) async throws {
        let logger = self.logger, app = sync.app
        let rows = try await Self.timed(conn, .seconds(5), "horizon") {
            try await conn.query("SELECT seq, purged_seq FROM settings_sync_spaces WHERE app = \(app)", logger: logger)
                .decode((Int64, Int64).self).reduce(into: [(Int64, Int64)]()) { $0.append($1) }
        }
        let (seq, purged) = rows.first ?? (0, 0)
        if seq < state.cursorSeq {
            state.cursorSeq = 0
            state.cursorKey = ""
            for (path, reg) in state.leaves where reg.state == .synced || reg.state == .superseded {
                if reg.digest != nil { state.leaves[path]?.state = .pending }
            }
        } else if purged > state.cursorSeq {
            // Tombstones we never saw are gone: download everything; synced leaves the download
            // does not mention were deleted meanwhile.
            state.cursorSeq = 0
            state.cursorKey = ""
            resyncUnseen = Set(state.leaves.filter { $0.value.state == .synced && $0.value.digest != nil }.keys)
        }
    }

    // MARK: Pull

    typealias Row = (key: String, value: ByteBuffer?, hlc: Int64, device: UUID, seq: Int64)

    /// Pulls to the end. Pages of 2,000 rows are applied in batches of up to 10,000 (one apply,
    /// one flush, two state saves per batch: a fresh device's download is not quadratic).
    func pullAll(_ conn: PostgresConnection) async throws {
        sync.pullCount.add(1, ordering: .relaxed)
        let logger = self.logger, app = sync.app
        var seq = state.cursorSeq, key = state.cursorKey
        var batch: [Row] = []
        while true {
            let (s, k) = (seq, key)
            let rows: [Row] = try await Self.timed(conn, .seconds(15), "pull") {
                var out: [Row] = []
                // An empty cursor key means every row of `seq` was seen.
                let result = k.isEmpty
                    ? try await conn.query("""
                        SELECT key, value, hlc, device, seq FROM settings_sync_entries
                        WHERE app = \(app) AND seq > \(s) ORDER BY seq, key LIMIT \(SyncLimits.pullPage)
                        """, logger: logger)
                    : try await conn.query("""
                        SELECT key, value, hlc, device, seq FROM settings_sync_entries
                        WHERE app = \(app) AND (seq, key) > (\(s), \(k)) ORDER BY seq, key LIMIT \(SyncLimits.pullPage)
                        """, logger: logger)
                for try await r in result.decode((String, ByteBuffer?, Int64, UUID, Int64).self) {
                    out.append((r.0, r.1, r.2, r.3, r.4))
                }
                return out
            }
            let end = rows.count < SyncLimits.pullPage
            if let last = rows.last {
                logger.trace("pulled \(rows.count) rows")
                batch += rows
                seq = last.seq
                // A short page is the end: every row of `last.seq` is seen (a later change gets a new seq).
                key = end ? "" : last.key
            }
            if !batch.isEmpty, end || batch.count >= 5 * SyncLimits.pullPage {
                try await applyPage(batch)
                batch = []
                state.cursorSeq = seq
                state.cursorKey = key
                try await saveState()
                logger.trace("batch applied, cursor \(seq)")
            } else if end, rows.isEmpty, seq == state.cursorSeq, key != state.cursorKey {
                state.cursorKey = key
            }
            if end {
                try await deleteUnseenAfterResync()
                return
            }
        }
    }

    /// After a full download (the tombstones past our cursor were purged): the synced leaves it
    /// did not mention were deleted on the server; delete them here too.
    func deleteUnseenAfterResync() async throws {
        guard let unseen = resyncUnseen else { return }
        resyncUnseen = nil
        let gone = unseen.compactMap { path -> Incoming? in
            guard let reg = state.leaves[path], reg.state == .synced else { return nil }
            return Incoming(key: SettingsKey(path), value: nil, digest: nil, hlc: reg.hlc, device: reg.device, size: 0)
        }
        if !gone.isEmpty {
            logger.info("full download after a purge: \(gone.count) leaves were deleted meanwhile")
            try await apply(gone)
            try await saveState()
        }
    }

    struct Incoming {
        var key: SettingsKey
        var value: PlistValue?
        var digest: Int64?
        var hlc: Int64
        var device: UUID
        /// About how many bytes it takes in the settings file (``fileSize(_:_:binary:)``).
        var size: Int
    }

    /// Why a pulled row cannot be applied, or its key, value and stored size when it can.
    func validate(_ row: Row) -> Result<(SettingsKey, PlistValue?, Int), SettingsSyncError> {
        func bad(_ reason: String) -> Result<(SettingsKey, PlistValue?, Int), SettingsSyncError> {
            .failure(.badRow(key: row.key, seq: row.seq, reason: reason))
        }
        switch SyncKeyRules.problem(row.key) {
        case .keyTooLong(_, let bytes, let components)?:
            return bad("not a valid key path: \(bytes) bytes, \(components) components (limits \(SyncLimits.keyBytes), \(SyncLimits.keyComponents))")
        case .badKey(_, let reason)?:
            return bad("not a valid key path: \(reason)")
        default:
            break
        }
        let key = SettingsKey(row.key)
        guard row.hlc <= (nowMs + SyncLimits.futureMs) << 16 | 0xffff else {
            return bad("timestamp \(((row.hlc >> 16) - nowMs) / 1000) s ahead of the server clock")
        }
        let secret = isSecret(key)
        if secret, sync.secrets.keyBytes == nil { return .failure(.secretNotSynced(key: row.key)) }
        guard var buffer = row.value else { return .success((key, nil, 0)) }
        guard buffer.readableBytes <= SyncLimits.valueBytes + SyncSecrets.overhead,
              var bytes = buffer.readBytes(length: buffer.readableBytes)
        else { return bad("value over \(SyncLimits.valueBytes) bytes") }
        // A sealed value is a secret wherever it is found (another device may mark more keys).
        if secret || SyncSecrets.isSealed(bytes) {
            guard let secretKey = sync.secrets.key else { return .failure(.secretNotSynced(key: row.key)) }
            guard let plain = SyncSecrets.open(bytes, key: secretKey, app: sync.app, path: row.key) else {
                return bad("a secret not sealed with this device's key")
            }
            bytes = plain
        }
        let value: PlistValue
        do {
            value = try PlistValue(decoding: bytes, options: PlistReadOptions(maximumDepth: 64))
        } catch {
            return bad("undecodable value: \(error.message)")
        }
        if case .dictionary = value { return bad("a dictionary (only leaves sync)") }
        return .success((key, value, fileSize(row.key, value, binary: bytes.count)))
    }

    /// Whether the sync counts `key` secret (``SettingsSyncSecrets``), remembered per path: the
    /// secret-name rule is checked once per leaf, not at every scan.
    func isSecret(_ key: SettingsKey) -> Bool {
        if let known = secretPaths[key.path] { return known }
        let secret = sync.secrets.isSecret(key)
        secretPaths[key.path] = secret
        return secret
    }

    /// `key` as conflicts show it: marked secret when the sync counts it secret.
    func shown(_ key: SettingsKey) -> SettingsKey {
        isSecret(key) ? .secret(key.path) : key
    }

    func applyPage(_ rows: [Row]) async throws {
        var incoming: [Incoming] = []
        var conflicts: [SettingsSyncConflict] = []
        var problems: [SettingsSyncError] = []
        for row in rows {
            resyncUnseen?.remove(row.key)
            let key: SettingsKey, value: PlistValue?, size: Int
            switch validate(row) {
            case .failure(let problem):
                let once = if case .secretNotSynced = problem { "secret \(row.key)" } else { "\(row.seq) \(row.key)" }
                if reportedRows.insert(once).inserted { problems.append(problem) }
                continue
            case .success(let ok):
                (key, value, size) = ok
            }
            guard sync.scope.includes(key) else { continue }
            receive(row.hlc)
            let reg = state.leaves[key.path]
            let remote = (row.hlc, row.device)
            if let reg, !LeafRegister.newer(remote, than: (reg.hlc, reg.device)) {
                if remote == (reg.hlc, reg.device) {
                    if reg.state == .superseded { state.leaves[key.path]?.state = .synced }
                } else if row.device != me, reg.device == me, leafValue(key) != value {
                    conflicts.append(SettingsSyncConflict(
                        key: shown(key), keptValue: leafValue(key), lostValue: value, keptDevice: me, lostDevice: row.device,
                        keptClock: reg.hlc, lostClock: row.hlc, thisDeviceLost: false))
                }
                continue
            }
            if let reg, reg.state == .pending || reg.state == .superseded, row.device != me, leafValue(key) != value {
                conflicts.append(SettingsSyncConflict(
                    key: shown(key), keptValue: value, lostValue: leafValue(key), keptDevice: row.device, lostDevice: reg.device,
                    keptClock: row.hlc, lostClock: reg.hlc, thisDeviceLost: true))
            }
            incoming.append(Incoming(key: key, value: value, digest: LeafDigest.of(value), hlc: row.hlc, device: row.device, size: size))
        }
        incoming = withinSpaceLimit(incoming, problems: &problems)
        if !incoming.isEmpty { try await apply(incoming) }
        for c in conflicts { sync.report(c) }
        for p in problems { sync.report(p) }
    }

    // MARK: Space total

    /// The file size (``fileSize(_:_:binary:)``) of a live leaf, cached by digest; 0 for absent or rejected leaves.
    func storedSize(_ path: String, _ reg: LeafRegister) -> Int {
        guard let digest = reg.digest, reg.state != .rejected else { return 0 }
        if let cached = sizes[path], cached.digest == digest { return cached.size }
        guard let value = leafValue(SettingsKey(path)) else { return 0 }
        let binary = (try? value.encodedBytes(as: .binary).count) ?? 0
        let size = fileSize(path, value, binary: binary)
        sizes[path] = (digest, size)
        return size
    }

    /// About how many bytes a leaf takes in the settings file, in the store's format (an upper
    /// estimate): the binary size for binary files; for text formats its key elements, strings
    /// with their escapes (`&amp;` is 5 bytes for 1), data in base64, arrays encoded.
    func fileSize(_ path: String, _ value: PlistValue, binary: Int) -> Int {
        if store.format == .binary { return path.utf8.count + binary }
        let components = path.utf8.count(where: { $0 == UInt8(ascii: "/") }) + 1
        let keys = 2 * path.utf8.count + 32 * components
        switch value {
        case .string(let text):
            return keys + 32 + text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "&") ? 5 : $1 == UInt8(ascii: "<") || $1 == UInt8(ascii: ">") ? 4 : 1) }
        case .data(let data):
            return keys + 32 + (data.count + 2) / 3 * 4 * 70 / 68
        case .array:
            return keys + ((try? value.encodedBytes(as: store.format).count) ?? 6 * binary)
        default:
            return keys + 64
        }
    }

    /// The space total of every live leaf except those at `excluded` paths (and pending ones when `settledOnly`).
    func spaceTotal(excluding excluded: Set<String> = [], settledOnly: Bool = false) -> Int {
        var total = 0
        for (path, reg) in state.leaves where !excluded.contains(path) && !(settledOnly && reg.state == .pending) {
            total += storedSize(path, reg)
        }
        return total
    }

    /// The incoming rows that fit the space total (``SyncLimits/clientSpaceBytes``, half the
    /// store's 64 MiB file limit): a batch never makes the settings file too large to load.
    /// The others are not applied and are reported once.
    func withinSpaceLimit(_ incoming: [Incoming], problems: inout [SettingsSyncError]) -> [Incoming] {
        var total = spaceTotal(excluding: Set(incoming.map(\.key.path)))
        var kept: [Incoming] = []
        kept.reserveCapacity(incoming.count)
        for item in incoming {
            let size = item.value == nil ? 0 : item.size
            if total + size > SyncLimits.clientSpaceBytes {
                if reportedRows.insert("full \(item.key.path) \(item.digest ?? 0)").inserted {
                    problems.append(.spaceFull(key: item.key.path, bytes: total + size, limit: SyncLimits.clientSpaceBytes))
                }
                continue
            }
            total += size
            if let digest = item.digest { sizes[item.key.path] = (digest, size) }
            kept.append(item)
        }
        return kept
    }

    /// (a) mark applying durably, (b) one conditional batch under the store's lock (skipping keys
    /// a local write changed since), flush, (c) mark synced; the caller saves the cursor.
    func apply(_ all: [Incoming]) async throws {
        // A key pulled twice in one batch (changed between pages): its later row is the newer.
        var lastIndex: [SettingsKey: Int] = [:]
        for (i, item) in all.enumerated() { lastIndex[item.key] = i }
        let incoming = all.enumerated().filter { lastIndex[$0.element.key] == $0.offset }.map(\.element)
        var known: [SettingsKey: Int64?] = [:]
        for item in incoming {
            let old = state.leaves[item.key.path]
            known[item.key] = .some(old?.digest)
            var reg = LeafRegister(hlc: item.hlc, device: item.device, digest: item.digest, state: .applying)
            reg.prevHLC = old?.hlc ?? 0
            reg.prevDevice = old?.device ?? me
            reg.prevDigest = old?.digest
            reg.prevState = old?.state ?? .synced
            reg.prevExists = old != nil
            state.leaves[item.key.path] = reg
        }
        logger.trace("apply \(incoming.count): marking applying")
        try await saveState()
        logger.trace("apply: marked")
        var skipped: Set<SettingsKey> = []
        let applied = store.applyToUserLayer(incoming.map { ($0.key, $0.value) }, origin: .sync) { key, current in
            let ok = LeafDigest.of(current) == (known[key] ?? nil)
            if !ok { skipped.insert(key) }
            return ok
        }
        logger.trace("apply: applied \(applied.count)")
        if !applied.isEmpty { try await store.flush() }
        logger.trace("apply: flushed")
        for item in incoming {
            // Skipped keys take the remote register: the local edit that raced is compared
            // against it when processed, and wins with a newer clock.
            state.leaves[item.key.path] = LeafRegister(hlc: item.hlc, device: item.device, digest: item.digest, state: .synced)
        }
        if !skipped.isEmpty { sync.noteLocal(Array(skipped), keepingEarlier: true) }
    }

    // MARK: Push

    /// Pushes every pending leaf; returns the last change number handed out (0: none).
    @discardableResult
    func pushAll(_ conn: PostgresConnection) async throws -> Int64 {
        var lastChange: Int64 = 0
        // What we push must be durable here first: otherwise a crash leaves a state file that
        // calls synced a value the settings file never got, and the next start would push its
        // removal everywhere.
        try await store.flush()
        var batch: [(path: String, bytes: ByteBuffer, hlc: Int64, deleted: Bool)] = []
        let liveCount = state.leaves.values.count(where: { $0.digest != nil && $0.state != .rejected })
        var total = spaceTotal(settledOnly: true)
        for (path, reg) in state.leaves.sorted(by: { $0.key < $1.key }) where reg.state == .pending {
            let key = SettingsKey(path)
            let value = leafValue(key)
            var hlc = reg.hlc
            let bytes = value.flatMap { try? $0.encodedBytes(as: .binary) }   // encoded once: digest and payload
            let digest = value == nil ? nil : bytes.map { LeafDigest.of(bytes: $0) } ?? LeafDigest.unencodable
            if digest != reg.digest {
                hlc = tick()
                state.leaves[path] = LeafRegister(hlc: hlc, device: me, digest: digest, state: .pending)
            }
            // The same rules as pulled rows: a bad key stays here, reported once, and holds back nothing.
            if let problem = SyncKeyRules.problem(path) {
                reject(path, digest, problem)
                continue
            }
            guard value != nil else {
                batch.append((path, ByteBuffer(), hlc, true))
                continue
            }
            guard let bytes else {
                reject(path, digest, .valueTooLarge(key: path, bytes: -1, limit: SyncLimits.valueBytes))
                continue
            }
            if bytes.count > SyncLimits.valueBytes {
                reject(path, digest, .valueTooLarge(key: path, bytes: bytes.count, limit: SyncLimits.valueBytes))
                continue
            }
            if liveCount > SyncLimits.leaves {
                reject(path, digest, .tooManyKeys(key: path, count: liveCount, limit: SyncLimits.leaves))
                continue
            }
            let size = fileSize(path, value ?? .bool(false), binary: bytes.count)
            if total + size > SyncLimits.clientSpaceBytes {
                reject(path, digest, .spaceFull(key: path, bytes: total + size, limit: SyncLimits.clientSpaceBytes))
                continue
            }
            total += size
            if let digest { sizes[path] = (digest, size) }
            if let secretKey = sync.secrets.key, isSecret(key) {
                guard let sealed = try? SyncSecrets.seal(bytes, key: secretKey, app: sync.app, path: path) else {
                    reject(path, digest, .valueTooLarge(key: path, bytes: -1, limit: SyncLimits.valueBytes))
                    continue
                }
                batch.append((path, ByteBuffer(bytes: sealed), hlc, false))
            } else {
                batch.append((path, ByteBuffer(bytes: bytes), hlc, false))
            }
        }
        var start = 0
        while start < batch.count {
            let chunk = Array(batch[start..<min(start + SyncLimits.pushBatch, batch.count)])
            start += chunk.count
            let superseded: Set<String>, changeSeq: Int64
            do {
                (changeSeq, superseded) = try await push(conn, chunk)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "53400" {
                // The space is full on the server (other devices filled it): these leaves stay here.
                for item in chunk where !item.deleted {
                    reject(item.path, state.leaves[item.path]?.digest, .spaceFull(key: item.path, bytes: -1, limit: SyncLimits.spaceBytes))
                }
                logger.info("push refused: \(Self.describe(error))")
                continue
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "22008" {
                // Our clock ran ahead of the server's: re-stamp and retry once.
                state.lastHLC = nowMs << 16
                let restamped = chunk.map { item in
                    let hlc = tick()
                    state.leaves[item.path]?.hlc = hlc
                    return (item.path, item.bytes, hlc, item.deleted)
                }
                (changeSeq, superseded) = try await push(conn, restamped)
            }
            // Nobody pushed between our cursor and this push: its rows are ours, no need to pull them.
            lastChange = changeSeq
            if changeSeq == state.cursorSeq + 1, state.cursorKey.isEmpty { state.cursorSeq = changeSeq }
            logger.trace("pushed \(chunk.count), superseded \(superseded.count)")
            for item in chunk {
                guard var reg = state.leaves[item.path], reg.state == .pending else { continue }
                reg.state = superseded.contains(item.path) ? .superseded : .synced
                state.leaves[item.path] = reg
            }
        }
        // Once for all chunks: after a crash before it, the same leaves are pushed again with
        // the same clocks, which the server ignores (an exact retry).
        try await saveState()
        return lastChange
    }

    func push(_ conn: PostgresConnection, _ chunk: [(path: String, bytes: ByteBuffer, hlc: Int64, deleted: Bool)]) async throws -> (Int64, Set<String>) {
        let logger = self.logger, app = sync.app, me = self.me
        let keys = chunk.map(\.path), values = chunk.map(\.bytes), hlcs = chunk.map(\.hlc), deleted = chunk.map(\.deleted)
        return try await Self.timed(conn, .seconds(30), "push") {
            var superseded: Set<String> = []
            var changeSeq: Int64 = 0
            let rows = try await conn.query("""
                SELECT change_seq, superseded_key FROM settings_sync_push(\(app), \(me), \(keys), \(values), \(hlcs), \(deleted))
                """, logger: logger)
            for try await (seq, key) in rows.decode((Int64, String?).self) {
                changeSeq = seq
                if let key { superseded.insert(key) }
            }
            return (changeSeq, superseded)
        }
    }

    func reject(_ path: String, _ digest: Int64?, _ problem: SettingsSyncError) {
        state.leaves[path]?.state = .rejected
        if reportedLimits.insert("\(path) \(digest ?? 0)").inserted { sync.report(problem) }
    }

    // MARK: Helpers

    /// Runs `body`, closing the connection (which fails the query) if it takes longer than
    /// `limit` or the task is cancelled, and failing at once when the connection closes. Does not
    /// wait for an abandoned `body`: postgres-nio can leave a query written to a closed channel
    /// unanswered forever.
    static func timed<T: Sendable>(
        _ conn: PostgresConnection, _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        if Task.isCancelled || conn.isClosed { throw SyncConnectionError(description: "connection closed before \(what)") }
        let once = OneShot<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                once.set(continuation)
                // A closed connection fails the operation at once, even when postgres-nio never
                // answers a query written to the closing channel.
                let watch = CloseWatch.of(conn)
                let id = watch.add { once.resume(.failure(SyncConnectionError(description: "connection closed during \(what)"))) }
                // The deadline is a timer on the connection's event loop: one task per query, the body's.
                let (seconds, attoseconds) = limit.components
                let timer = conn.eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
                    if once.resume(.failure(SyncConnectionError(description: "\(what) timed out after \(limit)"))) { closeNow(conn) }
                }
                Task {
                    let result: Result<T, any Error>
                    do { result = .success(try await body()) } catch { result = .failure(error) }
                    once.resume(result)
                    timer.cancel()
                    watch.remove(id)
                }
            }
        } onCancel: {
            if once.resume(.failure(CancellationError())) { closeNow(conn) }
        }
    }

    /// The server must have this schema version, installed by `settings-sync-admin install`.
    static func checkSchema(_ conn: PostgresConnection, _ logger: Logger) async throws {
        let exists = try await conn.query("SELECT to_regclass('public.settings_sync_meta') IS NOT NULL", logger: logger)
            .decode(Bool.self).reduce(into: false) { $0 = $1 }
        guard exists else { throw SettingsSyncError.schemaMismatch(found: 0, expected: SyncSchema.version) }
        let version = try await conn.query("SELECT coalesce(max(version), 0) FROM settings_sync_meta", logger: logger)
            .decode(Int32.self).reduce(into: Int32(0)) { $0 = $1 }
        if version != SyncSchema.version {
            throw SettingsSyncError.schemaMismatch(found: Int(version), expected: SyncSchema.version)
        }
    }

    /// Starts `LISTEN` on the space's secret channel; its notifications (and its end) become
    /// events, coalesced: at most one waits while the engine pulls, so a flood costs one pull.
    static func listen(
        _ conn: PostgresConnection, _ channel: String, _ gen: Int, _ events: AsyncStream<SyncEvent>.Continuation, _ sync: SettingsSync
    ) -> Task<Void, Never> {
        Task {
            do {
                try await conn.listen(on: channel) { notifications in
                    events.yield(.listening(gen))
                    for try await n in notifications {
                        if sync.queueNotify(n.payload) { events.yield(.notify(gen)) }
                    }
                }
                events.yield(.lost(gen, "notifications ended"))
            } catch {
                events.yield(.lost(gen, Self.describe(error)))
            }
        }
    }

    /// Closes the connection without waiting: its pending queries fail.
    static func closeNow(_ conn: PostgresConnection) {
        let _: EventLoopFuture<Void> = conn.close()
    }

    /// One line, no secrets: PostgreSQL's message when there is one.
    static func describe(_ error: any Error) -> String {
        if let e = error as? PSQLError {
            if let message = e.serverInfo?[.message] {
                return "\(message) (\(e.serverInfo?[.sqlState] ?? "?"))"
            }
            if let underlying = e.underlying { return "\(e.code): \(describe(underlying))" }
            return "\(e.code)"
        }
        if let e = error as? SettingsSyncError { return e.description }
        return String(describing: error).replacingOccurrences(of: "\n", with: " ")
    }
}
