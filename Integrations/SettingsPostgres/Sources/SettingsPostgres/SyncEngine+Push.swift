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
                SELECT change_seq, superseded_key FROM settings_sync.settings_sync_push(\(app), \(me), \(keys), \(values), \(hlcs), \(deleted))
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
}
