import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization

extension SyncEngine {
    /// Pushes every pending leaf; returns the last change number handed out (0: none).
    @discardableResult
    func pushAll(_ conn: PostgresConnection) async throws -> Int64 {
        var lastChange: Int64 = 0
        // What we push must be durable here first: otherwise a crash leaves a state file that
        // calls synced a value the settings file never got, and the next start would push its
        // removal everywhere.
        try await store.flush()
        var batch: [PushItem] = []
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
            // A secret (now, or once on this device) leaves only sealed: without the key it waits
            // for a run that has it (issue 30, item 2).
            let secret = isSecret(key)
            if secret, sync.secrets.key == nil {
                holdBack(path, digest, "this run has no end-to-end key (secrets: .encrypted(with:)); a run with the key pushes it")
                continue
            }
            guard value != nil else {
                batch.append(PushItem(path: path, plain: nil, hlc: hlc, secret: secret))
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
            batch.append(PushItem(path: path, plain: bytes, hlc: hlc, secret: secret))
        }
        if batch.contains(where: \.secret) { batch = try await withoutUnopenableSecrets(conn, batch) }
        var start = 0
        while start < batch.count {
            let chunk = Array(batch[start..<min(start + SyncLimits.pushBatch, batch.count)])
            start += chunk.count
            let superseded: Set<String>, changeSeq: Int64
            do {
                (changeSeq, superseded) = try await push(conn, chunk)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "53400" {
                // The space is full on the server (other devices filled it): these leaves stay here.
                for item in chunk where item.plain != nil {
                    reject(item.path, state.leaves[item.path]?.digest, .spaceFull(key: item.path, bytes: -1, limit: SyncLimits.spaceBytes))
                }
                logger.info("push refused: \(Self.describe(error))")
                continue
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "22008" {
                // Our clock ran ahead of the server's: re-stamp and retry once.
                state.lastHLC = nowMs << 16
                let restamped = chunk.map { item in
                    var item = item
                    item.hlc = tick()
                    state.leaves[item.path]?.hlc = item.hlc
                    return item
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

    /// One leaf to push: `plain` is its binary plist (`nil`: a deletion); a secret one is sealed
    /// with its clock when sent (a deletion too: an empty plaintext), so a re-stamp reseals it.
    struct PushItem {
        var path: String
        var plain: [UInt8]?
        var hlc: Int64
        var secret: Bool
    }

    /// What a sealed value of `path` written at (`hlc`, `device`) is bound to.
    func secretContext(_ path: String, hlc: Int64, device: UUID) -> SecretContext {
        SecretContext(owner: sync.server.user, app: sync.app, path: path, hlc: hlc, device: device)
    }

    func push(_ conn: PostgresConnection, _ chunk: [PushItem]) async throws -> (Int64, Set<String>) {
        let logger = self.logger, app = sync.app, me = self.me
        let values = try chunk.map { item -> ByteBuffer in
            guard item.secret else { return ByteBuffer(bytes: item.plain ?? []) }
            guard let key = sync.secrets.key else { throw SettingsSyncError.secretHeldBack(key: item.path, reason: "no end-to-end key") }
            return ByteBuffer(bytes: try SyncSecrets.seal(item.plain ?? [], key: key, secretContext(item.path, hlc: item.hlc, device: me)))
        }
        let keys = chunk.map(\.path), hlcs = chunk.map(\.hlc), deleted = chunk.map { $0.plain == nil && !$0.secret }
        return try await Self.timed(conn, .seconds(30), "push") {
            var superseded: Set<String> = []
            var changeSeq: Int64 = 0
            let rows = try await conn.query("""
                SELECT change_seq, superseded_key FROM settings_sync.settings_sync_push(\(app), \(me), \(keys), \(values), \(hlcs), \(deleted))
                """, logger: logger)
            for try await (seq, key) in rows.decode((Int64, String?).self) {
                changeSeq = seq
                if let key { superseded.insert(key) }
            }
            return (changeSeq, superseded)
        }
    }

    /// `batch` without the secrets whose value on the server is sealed with another end-to-end
    /// key (or changed there): pushing over it would leave the user's devices that hold the right
    /// key unable to read the key. Those are held back and reported (issue 30, item 4).
    func withoutUnopenableSecrets(_ conn: PostgresConnection, _ batch: [PushItem]) async throws -> [PushItem] {
        guard let secretKey = sync.secrets.key else { return batch }
        let logger = self.logger, app = sync.app, paths = batch.filter(\.secret).map(\.path)
        let rows = try await Self.timed(conn, .seconds(15), "secret check") {
            try await conn.query("""
                SELECT key, value, hlc, device FROM settings_sync.settings_sync_entries WHERE app = \(app) AND key = ANY(\(paths))
                """, logger: logger)
                .decode((String, ByteBuffer?, Int64, UUID).self)
                .reduce(into: [(String, ByteBuffer?, Int64, UUID)]()) { $0.append($1) }
        }
        var unopenable: Set<String> = []
        for (path, value, hlc, device) in rows {
            guard var buffer = value, let bytes = buffer.readBytes(length: buffer.readableBytes), SyncSecrets.isSealed(bytes) else { continue }
            if SyncSecrets.open(bytes, key: secretKey, secretContext(path, hlc: hlc, device: device)) != nil { continue }
            if SyncSecrets.openLegacy(bytes, key: secretKey, app: app, path: path) != nil { continue }
            unopenable.insert(path)
        }
        guard !unopenable.isEmpty else { return batch }
        for path in unopenable.sorted() {
            holdBack(path, state.leaves[path]?.digest,
                     "the value on the server cannot be opened with this device's end-to-end key (another key, or changed on the server): pushing would hide it from the devices that have the right key")
        }
        return batch.filter { !unopenable.contains($0.path) }
    }

    /// Keeps a pending secret change here for now (it stays pending), reported once per value.
    func holdBack(_ path: String, _ digest: Int64?, _ reason: String) {
        heldBack.insert(path)
        if reportedLimits.insert("held \(path) \(digest ?? 0)").inserted {
            logger.warning("secret held back: \(path): \(reason)")
            sync.report(.secretHeldBack(key: path, reason: reason))
        }
    }

    func reject(_ path: String, _ digest: Int64?, _ problem: SettingsSyncError) {
        state.leaves[path]?.state = .rejected
        if reportedLimits.insert("\(path) \(digest ?? 0)").inserted { sync.report(problem) }
    }
}
