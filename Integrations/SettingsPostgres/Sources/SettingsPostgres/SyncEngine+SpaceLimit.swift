import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import Synchronization

extension SyncEngine {
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
    /// a local write changed since), flush, (c) mark synced in memory: the caller moves the
    /// cursor, and a later save records both (``SyncEngine/stateUnsaved``). Until then the state
    /// file says `applying`, which ``reconcileApplying()`` settles after a crash from the values
    /// the settings file holds. The flush stays here, after the values reach the store's
    /// observers: moved to the next save it delayed the next pull's values instead.
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
        let devices = Dictionary(incoming.map { ($0.key, $0.device.uuidString) }, uniquingKeysWith: { _, last in last })
        let applied = store.applyToUserLayer(incoming.map { ($0.key, $0.value) }, origin: .sync, devices: devices) { key, current in
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
}
