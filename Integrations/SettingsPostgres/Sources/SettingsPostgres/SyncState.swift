import Foundation
import Settings
import SettingsPlist
import SettingsFiles
import Synchronization

/// What this device knows about one leaf: the last-writer-wins register it holds.
struct LeafRegister: Sendable, Hashable {
    enum State: Int, Sendable {
        /// The server has (or had) this version and the local value matches `digest`.
        case synced = 0
        /// A local edit to push.
        case pending = 1
        /// A remote version being applied (crash-safe marker; `prev*` hold the register before).
        case applying = 2
        /// Over a limit: kept local, not retried until the value changes.
        case rejected = 3
        /// Pushed, but the server holds a newer write: a conflict to report when it arrives.
        case superseded = 4
    }

    /// Hybrid logical clock of the version.
    var hlc: Int64
    /// The device that wrote it.
    var device: UUID
    /// Digest of the value's binary plist; `nil` = absent (a tombstone).
    var digest: Int64?
    var state: State
    // The register before an `applying` one.
    var prevHLC: Int64? = nil
    var prevDevice: UUID? = nil
    var prevDigest: Int64? = nil
    var prevState: State? = nil
    var prevExists: Bool? = nil

    /// `(hlc, device)` order, as the server compares them (uuid bytes in order).
    static func newer(_ a: (Int64, UUID), than b: (Int64, UUID)) -> Bool {
        if a.0 != b.0 { return a.0 > b.0 }
        return a.1.uuidString.lowercased() > b.1.uuidString.lowercased()
    }
}

/// The durable sync state, `settings.sync.plist` beside the settings file (``SyncStateStorage``).
struct SyncStateFile: Sendable, Equatable {
    var format: Int = 1
    var app: String
    var device: UUID
    var cursorSeq: Int64 = 0
    var cursorKey: String = ""
    var lastHLC: Int64 = 0
    var clockOffsetMs: Int64 = 0
    /// A digest of the machine id the state was written on (`nil`: unknown).
    var machine: String? = nil
    var leaves: [String: LeafRegister] = [:]
    /// The key paths that were secret on this device once (by name, by `marking`, or sealed when
    /// pulled): they stay secret here whatever a later run is given, so a pending change made
    /// with the end-to-end key is never pushed in clear by a run without it (issue 30, item 2).
    var secretLeaves: Set<String> = []
}

extension SyncStateFile {
    /// The state as a plist: format 1 of the state file, written whole by earlier versions and
    /// still read (``SyncStateStorage``); slots hold ``bytes`` instead.
    /// Built by hand: Codable costs 10x at 10,000 leaves. A leaf is an
    /// array `[hlc, device index, digest or false, state]`, plus `[prevHLC, prevDevice, prevDigest
    /// or false, prevState, prevExists]` while applying; devices are listed once in `devices`.
    var plist: PlistValue {
        var devices: [UUID] = [], index: [UUID: Int] = [:]
        func deviceIndex(_ d: UUID) -> PlistValue {
            if let i = index[d] { return PlistValue(i) }
            index[d] = devices.count
            devices.append(d)
            return PlistValue(devices.count - 1)
        }
        func digest(_ g: Int64?) -> PlistValue { g.map { PlistValue($0) } ?? .bool(false) }
        var leafPairs: [(String, PlistValue)] = []
        leafPairs.reserveCapacity(leaves.count)
        for (path, r) in leaves {
            var a: [PlistValue] = [PlistValue(r.hlc), deviceIndex(r.device), digest(r.digest), PlistValue(r.state.rawValue)]
            if r.state == .applying {
                a += [PlistValue(r.prevHLC ?? 0), deviceIndex(r.prevDevice ?? device), digest(r.prevDigest),
                      PlistValue(r.prevState?.rawValue ?? 0), .bool(r.prevExists ?? false)]
            }
            leafPairs.append((path, .array(a)))
        }
        let leavesValue = PlistValue.dictionary(PlistDictionary(leafPairs))
        return .dictionary(PlistDictionary([
            ("format", PlistValue(format)), ("app", .string(app)), ("device", .string(device.uuidString)),
            ("cursorSeq", PlistValue(cursorSeq)), ("cursorKey", .string(cursorKey)), ("lastHLC", PlistValue(lastHLC)),
            ("clockOffsetMs", PlistValue(clockOffsetMs)),
            ("machine", .string(machine ?? "")),
            ("devices", .array(devices.map { .string($0.uuidString) })),
            ("leaves", leavesValue),
            ("secrets", .array(secretLeaves.sorted().map { .string($0) })),
        ]))
    }

    /// Reads `plist`; `nil` when it is not a state file this version understands.
    init?(plist: PlistValue) {
        guard case .dictionary(let d) = plist, d["format"]?.int64Value == 1,
              let app = d["app"]?.stringValue, let device = d["device"]?.stringValue.flatMap(UUID.init(uuidString:)),
              case .array(let deviceList)? = d["devices"], case .dictionary(let leafDict)? = d["leaves"]
        else { return nil }
        let devices = deviceList.compactMap { $0.stringValue.flatMap(UUID.init(uuidString:)) }
        guard devices.count == deviceList.count else { return nil }
        self.init(app: app, device: device)
        cursorSeq = d["cursorSeq"]?.int64Value ?? 0
        cursorKey = d["cursorKey"]?.stringValue ?? ""
        lastHLC = d["lastHLC"]?.int64Value ?? 0
        clockOffsetMs = d["clockOffsetMs"]?.int64Value ?? 0
        machine = d["machine"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if case .array(let secrets)? = d["secrets"] {
            secretLeaves = Set(secrets.compactMap(\.stringValue))
        }
        func dev(_ v: PlistValue) -> UUID? { v.intValue.flatMap { devices.indices.contains($0) ? devices[$0] : nil } }
        func digest(_ v: PlistValue) -> Int64?? {
            if case .bool(false) = v { return .some(nil) }
            return v.int64Value.map { .some($0) }
        }
        for (path, value) in leafDict {
            guard case .array(let a) = value, a.count >= 4, let hlc = a[0].int64Value, let d = dev(a[1]),
                  let g = digest(a[2]), let st = a[3].intValue.flatMap(LeafRegister.State.init(rawValue:))
            else { return nil }
            var r = LeafRegister(hlc: hlc, device: d, digest: g, state: st)
            if st == .applying {
                guard a.count >= 9, let pg = digest(a[6]) else { return nil }
                r.prevHLC = a[4].int64Value
                r.prevDevice = dev(a[5])
                r.prevDigest = pg
                r.prevState = a[7].intValue.flatMap(LeafRegister.State.init(rawValue:))
                if case .bool(let e) = a[8] { r.prevExists = e }
            }
            leaves[path] = r
        }
    }
}

/// Blocking file work, run on one dedicated serial queue: never on Swift's cooperative pool.
enum BlockingIO {
    private static let queue = DispatchQueue(label: "SettingsPostgres.io")

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// Reads and writes the state file, `settings.sync.plist`: two slots of equal size, each a
/// header (`SSYNCST1`, a sequence number, the payload's length, and an FNV-1a checksum of the
/// three) and the state (``SyncStateFile/bytes``). A save writes the slot that does not hold the newest
/// state, in place, and flushes it (`fdatasync`): no new inode, no rename, no directory flush
/// per save (issue 30, item 12: the temporary files of atomic replaces were a sixth of a syncing
/// device's CPU with many devices of one user writing). A read takes the valid slot with the
/// highest sequence number, so a save torn by a crash leaves the one before it.
///
/// The library's file rules hold (``SettingsPlist/PlistFile``): the file is read bounded and
/// never through a link; it is written in place only when it is the very regular file this
/// storage last read or wrote (same device and inode, the expected size), opened without
/// following links; anything else (first save, a state outgrowing its slots, a file changed
/// by someone else, a state file of format 1: one whole binary plist, still read) is replaced atomically
/// through an exclusively created temporary file.
final class SyncStateStorage: Sendable {
    let url: URL
    /// The largest state file read (100,000 leaves take about 10 MB; two slots, twice that).
    static let limit = PlistFile.maximumSize
    static let magic: [UInt8] = Array("SSYNCST1".utf8)
    static let headerSize = 32

    /// Where the newest state is, once the file was read or written in this run.
    struct Slots: Sendable {
        var device: UInt64
        var inode: UInt64
        /// Each slot's size in bytes (the file holds two).
        var size: Int
        /// The slot holding the newest state (0 or 1), and its sequence number.
        var newest: Int
        var sequence: UInt64
    }

    private let slots = Mutex<Slots?>(nil)

    init(url: URL) {
        self.url = url
    }

    /// The newest valid state, or `nil` when there is no state file.
    ///
    /// - Throws: ``SyncStateStorage/Unreadable``, naming the file, when it cannot be read (a
    ///   link, not a regular file, too large) or no slot holds a state this version reads.
    func load() throws(Unreadable) -> SyncStateFile? {
        let read: PlistFile.Contents?
        do {
            read = try PlistFile.read(url.path, limit: Self.limit, followingLinks: false)
        } catch {
            throw Unreadable(path: url.path, reason: error.description)
        }
        guard let contents = read else { return nil }
        let bytes = contents.bytes
        if bytes.starts(with: Array("bplist00".utf8)) {
            // Format 1: one binary plist, replaced whole; the next save writes slots.
            slots.withLock { $0 = nil }
            let value: PlistValue
            do {
                value = try PlistValue(decoding: bytes)
            } catch {
                throw Unreadable(path: url.path, reason: "format 1: \(error.message)")
            }
            guard let state = SyncStateFile(plist: value) else { throw Unreadable(path: url.path, reason: "format 1: not a sync state this version reads") }
            return state
        }
        guard let (slot, payload) = Self.newestSlot(bytes) else {
            slots.withLock { $0 = nil }
            throw Unreadable(path: url.path, reason: "no slot holds a complete state (\(bytes.count) bytes)")
        }
        guard let state = SyncStateFile(bytes: payload) else {
            throw Unreadable(path: url.path, reason: "slot \(slot.newest) is not a sync state this version reads")
        }
        slots.withLock { $0 = Slots(device: contents.identity.device, inode: contents.identity.inode,
                                     size: slot.size, newest: slot.newest, sequence: slot.sequence) }
        return state
    }

    /// A state file that holds no state this version reads, or cannot be read.
    struct Unreadable: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "the sync state file \(path) cannot be used: \(reason)" }
    }

    /// The valid slot with the highest sequence number in a slotted file, and its payload.
    static func newestSlot(_ bytes: [UInt8]) -> (Slots, ArraySlice<UInt8>)? {
        guard bytes.count >= 2 * headerSize, bytes.count % 2 == 0 else { return nil }
        let size = bytes.count / 2
        var best: (Slots, ArraySlice<UInt8>)?
        for index in 0..<2 {
            let slot = bytes[(index * size)..<((index + 1) * size)]
            guard slot.starts(with: magic) else { continue }
            let base = slot.startIndex
            let sequence = readWord(slot, at: base + 8), length = readWord(slot, at: base + 16)
            guard length <= UInt64(size - headerSize) else { continue }
            let payload = slot[(base + headerSize)..<(base + headerSize + Int(length))]
            guard readWord(slot, at: base + 24) == checksum(sequence, length, payload) else { continue }
            if let b = best, b.0.sequence >= sequence { continue }
            best = (Slots(device: 0, inode: 0, size: size, newest: index, sequence: sequence), payload)
        }
        return best
    }

    func save(_ state: SyncStateFile) throws {
        let payload = state.bytes
        let known = slots.withLock { $0 }
        if let known, payload.count + Self.headerSize <= known.size,
           try writeInPlace(payload, slot: 1 - known.newest, sequence: known.sequence &+ 1, known) {
            slots.withLock { $0?.newest = 1 - known.newest; $0?.sequence = known.sequence &+ 1 }
            return
        }
        // A new file: room for the state to double before it is replaced again.
        let size = max(4096, (2 * (payload.count + Self.headerSize) + 4095) / 4096 * 4096)
        let sequence = (known?.sequence ?? 0) &+ 1
        var file = Self.slot(payload, sequence: sequence)
        file += [UInt8](repeating: 0, count: 2 * size - file.count)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let identity = try PlistFile.replace(url.path, with: file, permissions: 0o600)
        slots.withLock { $0 = Slots(device: identity.device, inode: identity.inode, size: size, newest: 0, sequence: sequence) }
    }

    /// Writes one slot in place and flushes it; `false` when the file is not the one last seen
    /// (then it is replaced whole instead).
    private func writeInPlace(_ payload: [UInt8], slot: Int, sequence: UInt64, _ known: Slots) throws -> Bool {
        // O_NONBLOCK: a FIFO planted here is refused below, not waited on.
        let fd = open(url.path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0, s.st_mode & S_IFMT == S_IFREG, UInt64(s.st_dev) == known.device,
              UInt64(s.st_ino) == known.inode, Int(s.st_size) == 2 * known.size
        else { return false }
        let bytes = Self.slot(payload, sequence: sequence)
        var failure: PlistFile.Failure?
        bytes.withUnsafeBytes { raw in
            do throws(PlistFile.Failure) { try PlistFile.writeAll(fd, raw, at: slot * known.size) } catch { failure = error }
        }
        if let failure { throw PlistFile.Failure("cannot write the sync state file", code: failure.code) }
        // Same size, written in place: the data is what must reach the disk.
        guard PlistFile.flushToDisk(fd, dataOnly: true) else { throw PlistFile.Failure("cannot flush the sync state file to disk") }
        return true
    }

    /// A slot's header and payload.
    static func slot(_ payload: [UInt8], sequence: UInt64) -> [UInt8] {
        var bytes = magic
        bytes.reserveCapacity(headerSize + payload.count)
        for word in [sequence, UInt64(payload.count), checksum(sequence, UInt64(payload.count), payload[...])] {
            withUnsafeBytes(of: word.littleEndian) { bytes += $0 }
        }
        return bytes + payload
    }

    static func checksum(_ sequence: UInt64, _ length: UInt64, _ payload: ArraySlice<UInt8>) -> UInt64 {
        var words: [UInt8] = []
        withUnsafeBytes(of: sequence.littleEndian) { words += $0 }
        withUnsafeBytes(of: length.littleEndian) { words += $0 }
        return UInt64(bitPattern: LeafDigest.of(bytes: words + payload))
    }

    static func readWord(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt64 {
        var word: UInt64 = 0
        for i in 0..<8 { word |= UInt64(bytes[index + i]) << (8 * i) }
        return word
    }

}

/// One syncing process per settings file: an exclusive `flock` on `.settings.sync.lock`, taken
/// with the library's lock rule (``SettingsPlist/PlistFile/tryLock(_:)``: never through a link).
enum SyncFileLock {
    /// The lock, or `nil` when another process holds it. Never blocks.
    ///
    /// - Throws: ``SettingsPlist/PlistFile/Failure`` when the lock file cannot be used (a link,
    ///   not a regular file).
    static func tryAcquire(_ url: URL) throws -> PlistFile.Lock? {
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return try PlistFile.tryLock(url.path)
    }
}

/// Stable 64-bit digest (FNV-1a) of a leaf's binary plist; `nil` for an absent leaf.
enum LeafDigest {
    static func of(_ value: PlistValue?) -> Int64? {
        guard let value else { return nil }
        if case .dictionary = value { return namespace }
        guard let bytes = try? value.encodedBytes(as: .binary) else { return unencodable }
        return of(bytes: bytes)
    }

    static func of(bytes: [UInt8]) -> Int64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return Int64(bitPattern: h)
    }

    /// A dictionary where a leaf was: never equal to a leaf's digest.
    static let namespace: Int64 = .min
    static let unencodable: Int64 = .min + 1
}

/// Walks a user layer's leaves (non-dictionary values; empty dictionaries are not leaves).
func forEachLeaf(_ dict: PlistDictionary, _ prefix: [String] = [], _ body: (SettingsKey, PlistValue) -> Void) {
    for (k, v) in dict {
        let path = prefix + [k]
        if case .dictionary(let d) = v { forEachLeaf(d, path, body) } else { body(SettingsKey(components: path), v) }
    }
}
