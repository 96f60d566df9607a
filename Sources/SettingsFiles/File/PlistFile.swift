import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The one implementation of the rules that keep processes and users apart when property-list
/// files are read and written: the Settings library's store and model files, the `settings`
/// tool and the sync integration all go through it.
///
/// - ``read(_:limit:followingLinks:)`` reads a whole regular file, refusing anything else (a FIFO,
///   a device, a directory) without blocking and anything over ``maximumSize`` before allocating.
/// - ``replace(_:with:permissions:owner:durable:)-(_,[UInt8],_,_,_)`` replaces a file durably and atomically: an
///   unpredictable temporary file created `O_CREAT|O_EXCL|O_NOFOLLOW` beside it, flushed, given
///   the old file's mode and owner, renamed over it, and the directory flushed.
/// - ``target(of:)`` applies the link rule: which symbolic links are followed (see
///   `PlistFile+Links.swift`).
/// - ``lockPath(for:)`` and ``tryLock(_:)`` name and take the advisory lock beside a settings file.
///
/// ```swift
/// let target = try PlistFile.target(of: path)                  // refuses a foreign link
/// guard let lock = try PlistFile.tryLock(PlistFile.lockPath(for: target.path)) else { return } // busy
/// defer { lock.release() }
/// let old = try PlistFile.read(target.path, followingLinks: false)
/// _ = try PlistFile.replace(target.path, with: bytes,
///                           permissions: old?.identity.permissions ?? 0o600, owner: old?.identity.owner)
/// ```
///
/// Every failure is a ``Failure`` carrying `errno`'s text.
public enum PlistFile {
    /// The largest property-list file read or written, in bytes (64 MiB): the `settings` tool
    /// refuses to read or write more, and it is the default of the Settings store's
    /// `PersistenceOptions.maximumFileSize`, so the tool never writes a settings file the
    /// library then refuses to load. A settings file is kilobytes; this bounds hostile input.
    public static let maximumSize = 64 << 20

    /// A failed file operation: what was being done, and `errno`.
    public struct Failure: Error, CustomStringConvertible, Sendable, Equatable {
        /// What was being done, or what was wrong ("cannot open the file").
        public var operation: String
        /// The `errno` value.
        public var code: Int32

        /// Creates a failure.
        ///
        /// - Parameters:
        ///   - operation: what was being done.
        ///   - code: the `errno` value.
        public init(_ operation: String, code: Int32) {
            self.operation = operation
            self.code = code
        }

        /// Creates a failure with the current `errno`.
        ///
        /// - Parameter operation: what was being done.
        public init(_ operation: String) {
            self.init(operation, code: errno)
        }

        /// Whether the file (or a directory on its path) does not exist.
        public var isMissing: Bool { code == ENOENT || code == ENOTDIR }
        /// Whether it is a matter of permissions (or a read-only file system).
        public var isPermission: Bool { code == EACCES || code == EPERM || code == EROFS }
        /// `"operation: reason"`.
        public var description: String { "\(operation): \(PlistFile.reason(code))" }
    }

    /// What identifies one version of a file: replacing it (a new inode) or writing to it (a new
    /// size or modification time) changes the identity.
    public struct Identity: Equatable, Sendable {
        /// The device and inode.
        public var device: UInt64
        /// The inode number.
        public var inode: UInt64
        /// The size in bytes.
        public var size: Int64
        /// The modification time, seconds and nanoseconds.
        public var modifiedSeconds: Int64
        /// The nanoseconds of the modification time.
        public var modifiedNanoseconds: Int64
        /// The whole `st_mode` (file type and permission bits).
        public var mode: UInt32
        /// The owner's user ID.
        public var user: UInt32
        /// The owner's group ID.
        public var group: UInt32

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
            user = UInt32(s.st_uid)
            group = UInt32(s.st_gid)
        }

        /// Two identities are equal when they name the same inode with the same size and
        /// modification time (mode and owner are not compared).
        public static func == (a: Identity, b: Identity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modifiedSeconds == b.modifiedSeconds && a.modifiedNanoseconds == b.modifiedNanoseconds
        }

        /// The permission bits a rewrite keeps (read, write and execute for each class; never
        /// set-user-ID, set-group-ID or sticky).
        public var permissions: UInt32 { mode & 0o777 }
        /// The file's owner and group.
        public var owner: Owner { Owner(user: user, group: group) }
        /// Whether it is a regular file.
        public var isRegularFile: Bool { mode_t(mode) & S_IFMT == S_IFREG }
        /// Whether it is a symbolic link (an identity taken without following links).
        public var isSymbolicLink: Bool { mode_t(mode) & S_IFMT == S_IFLNK }
    }

    /// The owner to give a rewritten file: the existing file's, so a save made as root (say, by
    /// an installer or `sudo settings write`) does not take a user's file away from them.
    public struct Owner: Equatable, Sendable {
        /// The user ID.
        public var user: UInt32
        /// The group ID.
        public var group: UInt32

        /// Creates an owner.
        ///
        /// - Parameters:
        ///   - user: the user ID.
        ///   - group: the group ID.
        public init(user: UInt32, group: UInt32) {
            self.user = user
            self.group = group
        }
    }

    /// A whole file as read, and the identity of what was read.
    public struct Contents: Sendable {
        /// The file's bytes.
        public var bytes: [UInt8]
        /// The identity of the file that was read.
        public var identity: Identity
    }

    /// The identity of the file at `path`, or `nil` when it does not exist. A symbolic link is
    /// described itself, not followed (call ``target(of:)`` first to look through it).
    ///
    /// ```swift
    /// let before = try PlistFile.identity(of: path)
    /// ```
    ///
    /// - Parameter path: the file.
    /// - Returns: its identity, or `nil` when nothing is there.
    /// - Throws: ``Failure`` when it cannot be examined (permission denied on a directory).
    public static func identity(of path: String) throws(Failure) -> Identity? {
        var s = stat()
        guard lstat(path, &s) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Failure("cannot examine the file")
        }
        return Identity(s)
    }

    /// Reads a whole regular file, with the identity of what was read (`nil` when it does not
    /// exist). Anything but a regular file (a FIFO, a device, a directory, a socket) is refused
    /// without blocking and a device is never opened; a file larger than `limit` is refused
    /// before anything is allocated, and one that grows past it while being read is refused too.
    ///
    /// ```swift
    /// guard let contents = try PlistFile.read(path) else { return nil }  // missing
    /// let value = try PlistValue(decoding: contents.bytes)
    /// ```
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - limit: the largest size accepted, in bytes (``maximumSize`` by default).
    ///   - followingLinks: whether a final symbolic link is followed. Settings files apply the
    ///     link rule first (``target(of:)``) and then pass `false`, refusing any link met.
    /// - Returns: the bytes and identity, or `nil` when the file does not exist.
    /// - Throws: ``Failure`` naming the cause: not a regular file, too large (`EFBIG`), a link
    ///   where none is followed (`ELOOP`), permission denied.
    public static func read(_ path: String, limit: Int = maximumSize, followingLinks: Bool = true) throws(Failure) -> Contents? {
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW)
        // Look before opening: a device is never opened (opening some has effects of its own).
        var before = stat()
        if (followingLinks ? stat(path, &before) : lstat(path, &before)) == 0,
           (before.st_mode & S_IFMT) != S_IFREG, (before.st_mode & S_IFMT) != S_IFLNK {
            throw Failure("it is \(kind(UInt32(before.st_mode))), not a regular file", code: EINVAL)
        }
        let fd = retrying { open(path, flags) }
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            if errno == ELOOP { throw Failure("it is a symbolic link, which is not followed here", code: ELOOP) }
            throw Failure("cannot open the file")
        }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0 else { throw Failure("cannot examine the file") }
        guard (s.st_mode & S_IFMT) == S_IFREG else {
            throw Failure("it is \(kind(UInt32(s.st_mode))), not a regular file", code: EINVAL)
        }
        let size = Int(s.st_size)
        guard size <= limit else { throw tooLarge(size, limit: limit) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let bytes = try readAll(fd, limit: limit, sizeHint: size)
        return Contents(bytes: bytes, identity: Identity(s))
    }

    /// Everything readable from the open descriptor `fd` (a file, a pipe, standard input), up
    /// to `limit` bytes; more is refused.
    ///
    /// ```swift
    /// let input = try PlistFile.readAll(0)  // standard input
    /// ```
    ///
    /// - Parameters:
    ///   - fd: an open descriptor, read to its end.
    ///   - limit: the largest size accepted (``maximumSize`` by default).
    ///   - sizeHint: the expected size, to allocate once.
    /// - Returns: the bytes.
    /// - Throws: ``Failure``: `EFBIG` past the limit, or the read's `errno`.
    package static func readAll(_ fd: Int32, limit: Int = maximumSize, sizeHint: Int = 0) throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: min(max(sizeHint, 4096), limit) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                // More than expected: grow, never past one byte over the limit.
                guard count <= limit else { throw tooLarge(count, limit: limit) }
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit + 1 - count)))
            }
            let n = bytes.withUnsafeMutableBytes { buffer in
                retrying { systemRead(fd, buffer.baseAddress.map { $0 + count }, buffer.count - count) }
            }
            if n < 0 {
                if errno == EAGAIN { continue }  // a non-blocking pipe given as input
                throw Failure("cannot read the file")
            }
            if n == 0 { break }
            count += n
        }
        guard count <= limit else { throw tooLarge(count, limit: limit) }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// The failure for a file over the size limit (`EFBIG`), naming both sizes.
    ///
    /// - Parameters:
    ///   - size: the file's size.
    ///   - limit: the limit.
    /// - Returns: `"it is 100.0 MiB (…), larger than the limit of 64.0 MiB (…)"`.
    public static func tooLarge(_ size: Int, limit: Int = maximumSize) -> Failure {
        Failure("it is \(byteCount(size)), larger than the limit of \(byteCount(limit))", code: EFBIG)
    }

    /// `"2.5 MiB (2621440 bytes)"`-style sizes for messages.
    ///
    /// - Parameter n: a size in bytes.
    /// - Returns: the size in the largest binary unit it reaches, with the exact count.
    package static func byteCount(_ n: Int) -> String {
        let units: [(Int, String)] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (size, unit) in units where n >= size {
            let tenths = n * 10 / size
            return "\(tenths / 10).\(tenths % 10) \(unit) (\(n) bytes)"
        }
        return "\(n) bytes"
    }

    /// A short, lower-case reason for an `errno` value ("permission denied", "no such file").
    ///
    /// - Parameter code: the `errno` value.
    /// - Returns: the reason.
    public static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file"
        case EACCES, EPERM: return "permission denied"
        case EISDIR: return "it is a directory"
        case ENOTDIR: return "a component of the path is not a directory"
        case EROFS: return "read-only file system"
        case ENOSPC: return "no space left on device"
        case ELOOP: return "too many levels of symbolic links"
        case EFBIG: return "file too large"
        default:
            let text = String(cString: strerror(code))
            guard let first = text.first else { return "error \(code)" }
            return first.lowercased() + text.dropFirst()
        }
    }

    /// What a file that is not a regular file is, for messages ("a FIFO (named pipe)").
    ///
    /// - Parameter mode: its `st_mode`.
    /// - Returns: "a directory", "a FIFO (named pipe)", "a character device"…
    public static func kind(_ mode: UInt32) -> String {
        switch mode_t(mode) & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// Calls `body` again while it fails with `EINTR` (a signal arrived during the call).
    ///
    /// ```swift
    /// let fd = PlistFile.retrying { open(path, O_RDONLY) }
    /// ```
    ///
    /// - Parameter body: a system call returning a negative value on failure, with `errno` set.
    /// - Returns: the first result that is not a failure with `EINTR`.
    package static func retrying<T: SignedInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// The directory of `path` (`"."` for a bare name, `"/"` for a file at the root).
    ///
    /// - Parameter path: a path.
    /// - Returns: everything before its last `/`.
    public static func directory(of path: String) -> String {
        var path = path
        return path.withUTF8 { bytes in
            guard let slash = lastSlash(in: bytes) else { return "." }
            return slash == 0 ? "/" : String(decoding: bytes[..<slash], as: UTF8.self)
        }
    }

    /// The last component of `path`.
    ///
    /// - Parameter path: a path.
    /// - Returns: everything after its last `/`.
    public static func name(of path: String) -> String {
        var path = path
        return path.withUTF8 { bytes in
            guard let slash = lastSlash(in: bytes) else { return String(decoding: bytes, as: UTF8.self) }
            return String(decoding: bytes[(slash + 1)...], as: UTF8.self)
        }
    }

    /// Where the last `/` of a path's UTF-8 is. By byte, not by `Character`: `/` is one byte
    /// and never part of another character's encoding, and a search of the contiguous bytes
    /// costs a fraction of a walk of the string's views (paths are built at every save).
    static func lastSlash(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        bytes.lastIndex(of: UInt8(ascii: "/"))
    }
}

#if canImport(Glibc)
let systemRead = Glibc.read
let systemWrite = Glibc.write
#elseif canImport(Musl)
let systemRead = Musl.read
let systemWrite = Musl.write
#else
let systemRead = Darwin.read
let systemWrite = Darwin.write
#endif
