#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The thin layer of POSIX calls persistence is built on: whole-file reads, durable atomic
/// replacement, advisory locks and file identities. Every failure carries `errno`'s text.
enum POSIXFile {
    /// A failed system call: what was being done, and `errno`.
    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var code: Int32

        init(_ operation: String, code: Int32 = errno) {
            self.operation = operation
            self.code = code
        }

        var isMissing: Bool { code == ENOENT }
        var isPermission: Bool { code == EACCES || code == EPERM || code == EROFS }
        var description: String { "\(operation): \(String(cString: strerror(code)))" }
    }

    /// What identifies one version of a file: replacing it (a new inode) or writing to it (a new
    /// size or modification time) changes the identity.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int64
        var modifiedNanoseconds: Int64
        var mode: UInt32

        init(_ s: stat) {
            device = UInt64(s.st_dev)
            inode = UInt64(s.st_ino)
            size = Int64(s.st_size)
            #if canImport(Darwin)
            modifiedSeconds = Int64(s.st_mtimespec.tv_sec)
            modifiedNanoseconds = Int64(s.st_mtimespec.tv_nsec)
            #else
            modifiedSeconds = Int64(s.st_mtim.tv_sec)
            modifiedNanoseconds = Int64(s.st_mtim.tv_nsec)
            #endif
            mode = UInt32(s.st_mode)
        }

        static func == (a: Identity, b: Identity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modifiedSeconds == b.modifiedSeconds && a.modifiedNanoseconds == b.modifiedNanoseconds
        }

        /// The permission bits.
        var permissions: mode_t { mode_t(mode & 0o7777) }
    }

    /// The identity of the file at `path`, or `nil` when it does not exist.
    static func identity(of path: String) throws(Failure) -> Identity? {
        var s = stat()
        guard stat(path, &s) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Failure("cannot examine the file")
        }
        return Identity(s)
    }

    /// Reads a whole file, with the identity of what was read (`nil` when it does not exist).
    static func read(_ path: String) throws(Failure) -> (data: Data, identity: Identity)? {
        let fd = retrying { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Failure("cannot open the file")
        }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0 else { throw Failure("cannot examine the file") }
        guard (s.st_mode & S_IFMT) == S_IFREG else { throw Failure("not a regular file", code: EISDIR) }
        var bytes = [UInt8](repeating: 0, count: max(Int(s.st_size), 0) + 1)
        var count = 0
        while true {
            if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: bytes.count)) }
            let n = bytes.withUnsafeMutableBytes { buffer in
                retrying { systemRead(fd, buffer.baseAddress! + count, buffer.count - count) }
            }
            if n < 0 { throw Failure("cannot read the file") }
            if n == 0 { break }
            count += n
        }
        return (Data(bytes[..<count]), Identity(s))
    }

    /// Replaces the file at `path` with `bytes`, durably and atomically: a temporary file in the
    /// same directory is written, flushed to disk, given `permissions` and renamed over the
    /// target, and the directory is flushed so the rename itself survives a crash.
    ///
    /// - Returns: the identity of the new file.
    static func replace(_ path: String, with bytes: Data, permissions: mode_t) throws(Failure) -> Identity {
        let directory = PathParts(path).directory
        let temporary = directory + "/." + PathParts(path).name + ".tmp-\(getpid())-\(temporaryCounter.next())"
        let fd = retrying { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions) }
        guard fd >= 0 else { throw Failure("cannot create a temporary file in \(directory)") }
        let identity: Identity
        do throws(Failure) {
            defer { close(fd) }
            guard fchmod(fd, permissions) == 0 else { throw Failure("cannot set the file's permissions") }
            try writeAll(fd, bytes)
            guard fsync(fd) == 0 else { throw Failure("cannot flush the file to disk") }
            var s = stat()
            guard fstat(fd, &s) == 0 else { throw Failure("cannot examine the file") }
            identity = Identity(s)
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let failure = Failure("cannot replace the file")
            unlink(temporary)
            throw failure
        }
        syncDirectory(directory)
        return identity
    }

    /// Moves the file at `path` aside to `destination` (same directory) and flushes the directory.
    static func moveAside(_ path: String, to destination: String) throws(Failure) {
        guard rename(path, destination) == 0 else { throw Failure("cannot move the file aside") }
        syncDirectory(PathParts(path).directory)
    }

    /// Flushes a directory's entries to disk (best effort: some file systems refuse it).
    static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Takes an exclusive advisory lock on `path` (created if needed), waiting for other holders.
    /// The lock is released when the returned descriptor is closed.
    static func lock(_ path: String) throws(Failure) -> Int32 {
        let fd = retrying { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw Failure("cannot open the lock file \(path)") }
        guard retrying({ flock(fd, LOCK_EX) }) == 0 else {
            let failure = Failure("cannot lock \(path)")
            close(fd)
            throw failure
        }
        return fd
    }

    /// Releases a lock taken with ``lock(_:)``.
    static func unlock(_ fd: Int32) {
        close(fd)  // closing drops the flock
    }

    private static func writeAll(_ fd: Int32, _ data: Data) throws(Failure) {
        let failed: Failure? = data.withUnsafeBytes { raw -> Failure? in
            guard let base = raw.baseAddress else { return nil }
            var done = 0
            while done < raw.count {
                let n = retrying { systemWrite(fd, base + done, raw.count - done) }
                if n < 0 { return Failure("cannot write the file") }
                done += n
            }
            return nil
        }
        if let failed { throw failed }
    }

    /// Calls `body` again while it fails with `EINTR`.
    private static func retrying<T: SignedInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    private static let temporaryCounter = Counter()
}

/// Splits a path into its directory and last component.
struct PathParts {
    let directory: String
    let name: String

    init(_ path: String) {
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
            name = String(path[path.index(after: slash)...])
        } else {
            directory = "."
            name = path
        }
    }
}

/// A process-wide counter for unique temporary names.
private final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
private let systemWrite = Glibc.write
#elseif canImport(Musl)
private let systemRead = Musl.read
private let systemWrite = Musl.write
#else
private let systemRead = Darwin.read
private let systemWrite = Darwin.write
#endif
