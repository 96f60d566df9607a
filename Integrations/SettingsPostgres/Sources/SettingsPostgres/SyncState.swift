import Foundation
import Settings
import SettingsPlist

/// What this device knows about one leaf: the last-writer-wins register it holds.
struct LeafRegister: Codable, Sendable, Hashable {
    enum State: Int, Codable, Sendable {
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
struct SyncStateFile: Codable, Sendable {
    var format: Int = 1
    var app: String
    var device: UUID
    var cursorSeq: Int64 = 0
    var cursorKey: String = ""
    var lastHLC: Int64 = 0
    var clockOffsetMs: Int64 = 0
    var leaves: [String: LeafRegister] = [:]
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

/// Reads and writes the state file atomically (temporary file, fsync, rename, directory fsync).
struct SyncStateStorage: Sendable {
    let url: URL

    struct IOError: Error, CustomStringConvertible {
        var description: String
    }

    func load() throws -> SyncStateFile? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return try PlistDecoder().decode(SyncStateFile.self, from: data)
    }

    func save(_ state: SyncStateFile) throws {
        let data = try PlistEncoder(outputFormat: .binary).encode(state)
        let dir = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let tmp = dir.appending(path: ".\(url.lastPathComponent).tmp-\(getpid())")
        let fd = open(tmp.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw IOError(description: "cannot create \(tmp.path): errno \(errno)") }
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
        guard ok, rename(tmp.path, url.path) == 0 else {
            unlink(tmp.path)
            throw IOError(description: "cannot write \(url.path): errno \(errno)")
        }
        let dfd = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { fsync(dfd); close(dfd) }
    }
}

/// One syncing process per settings file: an exclusive `flock` on `.settings.sync.lock`.
enum SyncFileLock {
    /// The lock's descriptor, or `nil` when another process holds it. Never blocks.
    static func tryAcquire(_ url: URL) -> Int32? {
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
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
