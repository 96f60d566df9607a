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
        var user: uid_t
        var group: gid_t

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
            user = s.st_uid
            group = s.st_gid
        }

        static func == (a: Identity, b: Identity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modifiedSeconds == b.modifiedSeconds && a.modifiedNanoseconds == b.modifiedNanoseconds
        }

        /// The permission bits a rewrite keeps (read, write and execute for each class; never
        /// set-user-ID, set-group-ID or sticky).
        var permissions: mode_t { mode_t(mode & 0o777) }
        /// The file's owner and group.
        var owner: Owner { Owner(user: user, group: group) }
        /// Whether it is a regular file.
        var isRegularFile: Bool { mode_t(mode) & S_IFMT == S_IFREG }
    }

    /// The identity of the file at `path`, or `nil` when it does not exist. A symbolic link is
    /// described itself, not followed (call ``resolvingLinks(_:)`` first to look through it).
    static func identity(of path: String) throws(Failure) -> Identity? {
        var s = stat()
        guard lstat(path, &s) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Failure("cannot examine the file")
        }
        return Identity(s)
    }

    /// The path a settings file is really kept at: `path` itself, or, when it is a symbolic link
    /// (dotfile managers link `~/.config/App/settings.plist` into a repository), the file the
    /// link leads to, followed to the end. A dangling link leads to where its target would be.
    static func resolvingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<32 {
            var s = stat()
            guard lstat(current, &s) == 0, (s.st_mode & S_IFMT) == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { return current }
            let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : PathParts(current).directory + "/" + target
        }
        return current  // a loop of links: opening it fails with a clear error
    }

    /// Reads a whole regular file, with the identity of what was read (`nil` when it does not
    /// exist). Anything but a regular file (a FIFO, a device, a directory, a socket) is refused
    /// without blocking; a file larger than `limit` is refused before anything is allocated.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - limit: the largest size accepted, in bytes.
    ///   - followingLinks: whether a final symbolic link is followed (settings files resolve
    ///     their links first and then refuse any link met).
    static func read(_ path: String, limit: Int = 64 << 20, followingLinks: Bool = true) throws(Failure) -> (data: Data, identity: Identity)? {
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW)
        // Look before opening: a device is never opened (opening some has effects of its own).
        var before = stat()
        if (followingLinks ? stat(path, &before) : lstat(path, &before)) == 0,
           (before.st_mode & S_IFMT) != S_IFREG, (before.st_mode & S_IFMT) != S_IFLNK {
            throw Failure("it is \(fileKind(before.st_mode)), not a regular file", code: EINVAL)
        }
        let fd = retrying { open(path, flags) }
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            if errno == ELOOP { throw Failure("it is a symbolic link that leads nowhere usable", code: ELOOP) }
            throw Failure("cannot open the file")
        }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0 else { throw Failure("cannot examine the file") }
        guard (s.st_mode & S_IFMT) == S_IFREG else {
            throw Failure("it is \(fileKind(s.st_mode)), not a regular file", code: EINVAL)
        }
        let size = Int(s.st_size)
        guard size <= limit else { throw TooLarge(size: size, limit: limit).failure }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var bytes = [UInt8](repeating: 0, count: min(max(size, 0), limit) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                // The file grew while being read: grow the buffer, never past one byte over the limit.
                guard count <= limit else { throw TooLarge(size: count, limit: limit).failure }
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit + 1 - count)))
            }
            let n = bytes.withUnsafeMutableBytes { buffer in
                retrying { systemRead(fd, buffer.baseAddress! + count, buffer.count - count) }
            }
            if n < 0 { throw Failure("cannot read the file") }
            if n == 0 { break }
            count += n
        }
        guard count <= limit else { throw TooLarge(size: count, limit: limit).failure }
        return (Data(bytes[..<count]), Identity(s))
    }

    /// A file over the size limit.
    struct TooLarge {
        var size: Int
        var limit: Int
        var failure: Failure {
            Failure("it is \(byteCount(size)), larger than the limit of \(byteCount(limit)); not read", code: EFBIG)
        }
    }

    /// `"2.5 MB (2,500,000 bytes)"`-style sizes for messages.
    static func byteCount(_ n: Int) -> String {
        let units: [(Int, String)] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (size, unit) in units where n >= size {
            let tenths = n * 10 / size
            return "\(tenths / 10).\(tenths % 10) \(unit) (\(n) bytes)"
        }
        return "\(n) bytes"
    }

    private static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// The owner to give a rewritten file: the existing file's, so a save made as root (say, by
    /// an installer or `sudo settings write`) does not take a user's file away from them.
    struct Owner: Equatable {
        var user: uid_t
        var group: gid_t
    }

    /// Replaces the file at `path` with `bytes`, durably and atomically: a temporary file in the
    /// same directory is written, flushed to disk, given `permissions` (set-user-ID, set-group-ID
    /// and sticky bits are never carried over) and `owner`, and renamed over the target, and the
    /// directory is flushed so the rename itself survives a crash.
    ///
    /// - Returns: the identity of the new file.
    static func replace(_ path: String, with bytes: Data, permissions: mode_t, owner: Owner? = nil) throws(Failure) -> Identity {
        let directory = PathParts(path).directory
        let temporary = directory + "/." + PathParts(path).name + ".tmp-\(getpid())-\(temporaryCounter.next())"
        let mode = permissions & 0o777
        let fd = retrying { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode) }
        guard fd >= 0 else { throw Failure("cannot create a temporary file in \(directory)") }
        let identity: Identity
        do throws(Failure) {
            defer { close(fd) }
            if let owner, owner.user != geteuid() || owner.group != getegid() {
                // Only root (or a member of the group) may do this; otherwise the file keeps the
                // writer's ownership, as any editor's save would.
                _ = fchown(fd, owner.user, owner.group)
            }
            guard fchmod(fd, mode) == 0 else { throw Failure("cannot set the file's permissions") }
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

    /// Tries once, without waiting, to take an exclusive advisory lock on `path` (created if
    /// needed, owner-only). Returns the descriptor holding the lock, or `nil` when another
    /// process holds it. The lock file is never reached through a symbolic link and must be a
    /// regular file: a link planted in its place (which could make a privileged writer create or
    /// truncate a file elsewhere) is refused.
    static func tryLock(_ path: String) throws(Failure) -> Int32? {
        let fd = retrying { open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o600) }
        guard fd >= 0 else {
            if errno == ELOOP { throw Failure("the lock file \(path) is a symbolic link; refusing to use it", code: ELOOP) }
            throw Failure("cannot open the lock file \(path)")
        }
        var s = stat()
        guard fstat(fd, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw Failure("the lock file \(path) is not a regular file; refusing to use it", code: EINVAL)
        }
        guard retrying({ flock(fd, LOCK_EX | LOCK_NB) }) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw Failure("cannot lock \(path)", code: code)
        }
        return fd
    }

    /// Releases a lock taken with ``tryLock(_:)``.
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
