import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization

extension SyncEngine {
    typealias Row = (key: String, value: ByteBuffer?, hlc: Int64, device: UUID, seq: Int64)

    /// Pulls to the end. Pages of 2,000 rows are applied in batches of up to 10,000 (one apply,
    /// one flush, one state save per batch: a fresh device's download is not quadratic).
    ///
    /// The cursor moves past a batch only once its values are durable in the settings file, and
    /// is saved with the next state save (the next batch's apply, a push, a tick, the end of the
    /// run): a crash before then pulls the batch again, which changes nothing (issue 30, item 12:
    /// a save per pull was a third of a pull's file work with many devices of one user writing).
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
                        SELECT key, value, hlc, device, seq FROM settings_sync.settings_sync_entries
                        WHERE app = \(app) AND seq > \(s) ORDER BY seq, key LIMIT \(SyncLimits.pullPage)
                        """, logger: logger)
                    : try await conn.query("""
                        SELECT key, value, hlc, device, seq FROM settings_sync.settings_sync_entries
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
                stateUnsaved = true
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
            // A secret key is deleted only by a sealed deletion, never by its row's absence.
            guard let reg = state.leaves[path], reg.state == .synced, !isSecret(SettingsKey(path)) else { return nil }
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
        func refused(_ reason: String) -> Result<(SettingsKey, PlistValue?, Int), SettingsSyncError> {
            .failure(.secretRefused(key: row.key, seq: row.seq, reason: reason))
        }
        guard var buffer = row.value else {
            // A secret key's deletions are sealed: a row nulled on the server deletes nothing (issue 30, item 4).
            return secret ? refused("a deletion that is not sealed") : .success((key, nil, 0))
        }
        guard buffer.readableBytes <= SyncLimits.valueBytes + SyncSecrets.overhead,
              var bytes = buffer.readBytes(length: buffer.readableBytes)
        else { return bad("value over \(SyncLimits.valueBytes) bytes") }
        // A sealed value is a secret wherever it is found (another device may mark more keys).
        if secret || SyncSecrets.isSealed(bytes) {
            guard let secretKey = sync.secrets.key else { return .failure(.secretNotSynced(key: row.key)) }
            guard let plain = SyncSecrets.open(bytes, key: secretKey, secretContext(row.key, hlc: row.hlc, device: row.device)) else {
                if !SyncSecrets.isSealed(bytes) { return refused("a value in clear (secrets are only stored sealed)") }
                if SyncSecrets.openLegacy(bytes, key: secretKey, app: sync.app, path: row.key) != nil {
                    return refused("sealed by schema 3 or earlier, not bound to its user and version: save it again on a device that has it")
                }
                return refused("not sealed for this user, app, key and version with this device's end-to-end key")
            }
            markSecret(row.key)
            if plain.isEmpty { return .success((key, nil, 0)) }   // a sealed deletion
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
    /// A key that was secret once on this device (``SyncStateFile/secretLeaves``) stays secret.
    func isSecret(_ key: SettingsKey) -> Bool {
        if let known = secretPaths[key.path] { return known }
        let secret = state.secretLeaves.contains(key.path) || sync.secrets.isSecret(key)
        if secret { state.secretLeaves.insert(key.path) }
        secretPaths[key.path] = secret
        return secret
    }

    /// Counts `path` secret from now on, on this device (a sealed value was found there).
    func markSecret(_ path: String) {
        state.secretLeaves.insert(path)
        secretPaths[path] = true
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
            if row.device == me, let reg = state.leaves[row.key], reg.hlc == row.hlc, reg.device == me, reg.state != .applying {
                // This device's own push, held already: nothing to read or decode (issue 30, item 12).
                if reg.state == .superseded { state.leaves[row.key]?.state = .synced }
                continue
            }
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
                } else if reg.state == .synced || reg.state == .superseded, isSecret(key) {
                    // The server held this device's newer version (or a newer one still): an
                    // older sealed version now is one put back (issue 30, item 4).
                    let once = "\(row.seq) \(row.key)"
                    if reportedRows.insert(once).inserted {
                        problems.append(.secretRefused(key: row.key, seq: row.seq, reason: "an older version than this device already had (put back on the server)"))
                    }
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
}
