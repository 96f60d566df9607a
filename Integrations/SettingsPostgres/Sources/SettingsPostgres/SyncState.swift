import Foundation
import Settings
import SettingsPlist

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

/// The sync engine's file rules, in this one place (the core's `SettingsFile` keeps its own for
/// the settings file): never follow a symbolic link (`O_NOFOLLOW`), regular files only, temporary
/// files created exclusively (`O_EXCL`) under unpredictable names, reads bounded.
enum SyncFiles {
    struct IOError: Error, CustomStringConvertible {
        var description: String
    }

    static func failure(_ what: String, _ path: String) -> IOError {
        IOError(description: "cannot \(what) \(path): \(String(cString: strerror(errno)))")
    }

    /// Opens `path` (never through a link) and checks that it is a regular file; `nil` when absent.
    static func openRegular(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws -> Int32? {
        let fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw failure(errno == ELOOP ? "follow the link" : "open", path)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw IOError(description: "\(path) is not a regular file")
        }
        return fd
    }

    /// The whole file, at most `limit` bytes; `nil` when absent.
    static func read(_ url: URL, limit: Int) throws -> [UInt8]? {
        guard let fd = try openRegular(url.path, O_RDONLY) else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw failure("read", url.path) }
            if n == 0 { return out }
            out += chunk[0..<n]
            if out.count > limit { throw IOError(description: "\(url.path) is over \(limit) bytes") }
        }
    }

    /// Replaces `url` atomically: an exclusive temporary file beside it, fsync, rename, directory fsync.
    static func replace(_ url: URL, with data: [UInt8]) throws {
        let dir = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var random = SystemRandomNumberGenerator()
        let tmp = dir.appending(path: ".\(url.lastPathComponent).tmp-\(String(random.next(), radix: 36))").path
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("create", tmp) }
        var ok = data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let n = write(fd, base + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; return false }
                offset += n
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(tmp, url.path) == 0 else {
            let error = failure("write", url.path)
            unlink(tmp)
            throw error
        }
        let dfd = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { fsync(dfd); close(dfd) }
    }
}

/// Reads and writes the state file atomically (``SyncFiles``).
struct SyncStateStorage: Sendable {
    let url: URL
    /// The largest state file read (100,000 leaves take about 10 MB).
    static let limit = 64 << 20

    func load() throws -> SyncStateFile? {
        guard let bytes = try SyncFiles.read(url, limit: Self.limit) else { return nil }
        return SyncStateFile(plist: try PlistValue(decoding: bytes))
    }

    func save(_ state: SyncStateFile) throws {
        try SyncFiles.replace(url, with: try state.plist.encodedBytes(as: .binary))
    }
}

/// One syncing process per settings file: an exclusive `flock` on `.settings.sync.lock`.
enum SyncFileLock {
    /// The lock's descriptor, or `nil` when another process holds it. Never blocks.
    ///
    /// - Throws: ``SyncFiles/IOError`` when the lock file cannot be used (a link, not a regular file).
    static func tryAcquire(_ url: URL) throws -> Int32? {
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard let fd = try SyncFiles.openRegular(url.path, O_RDWR | O_CREAT) else {
            throw SyncFiles.IOError(description: "cannot create \(url.path)")
        }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return fd }
        close(fd)
        return nil
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
