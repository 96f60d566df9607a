import Foundation
import Settings
import SettingsPlist
import SettingsFiles

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

/// The durable sync state, `settings.sync.plist` beside the settings file.
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
    /// The state as a plist (built by hand: Codable costs 10x at 10,000 leaves). A leaf is an
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

/// Reads and writes the state file with the library's file rules (``SettingsPlist/PlistFile``:
/// never through a link, regular files only, bounded reads, atomic replace through an
/// exclusively created temporary file with an unpredictable name).
struct SyncStateStorage: Sendable {
    let url: URL
    /// The largest state file read (100,000 leaves take about 10 MB).
    static let limit = PlistFile.maximumSize

    func load() throws -> SyncStateFile? {
        guard let contents = try PlistFile.read(url.path, limit: Self.limit, followingLinks: false) else { return nil }
        return SyncStateFile(plist: try PlistValue(decoding: contents.bytes))
    }

    func save(_ state: SyncStateFile) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try PlistFile.replace(url.path, with: try state.plist.encodedBytes(as: .binary), permissions: 0o600)
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
