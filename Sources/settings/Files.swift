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

/// The tool's file operations, straight over POSIX: whole-file reads that never block on a FIFO
/// or open a device, atomic replacements that keep the file's permissions and owner, and the
/// advisory lock the Settings library takes beside a settings file. Every failure names the file
/// and the real cause ("permission denied", "it is a directory").
enum Files {
    /// The largest file read (a settings file is kilobytes; this bounds hostile input).
    static let readLimit = 256 << 20

    /// A short, lower-case reason for an `errno` value.
    static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file"
        case EACCES, EPERM: return "permission denied"
        case EISDIR: return "it is a directory"
        case ENOTDIR: return "a component of the path is not a directory"
        case EROFS: return "read-only file system"
        case ENOSPC: return "no space left on device"
        case ELOOP: return "too many levels of symbolic links"
        default:
            let text = String(cString: strerror(code))
            guard let first = text.first else { return "error \(code)" }
            return first.lowercased() + text.dropFirst()
        }
    }

    /// What a non-regular file is, for messages.
    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    /// What is at a path (following symbolic links).
    enum Status {
        case missing
        case file(stat)
        /// It exists but is not a regular file: a directory, a FIFO, a device.
        case other(String)
    }

    /// Looks at `path` (following links). Permission problems and the like are errors naming the file.
    static func status(_ path: String) throws(CLIError) -> Status {
        var s = stat()
        guard stat(path, &s) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return .missing }
            throw .failure("\(path): cannot read file: \(reason(errno))")
        }
        guard (s.st_mode & S_IFMT) == S_IFREG else { return .other(kind(s.st_mode)) }
        return .file(s)
    }

    /// The whole file at `path`. A missing file, a directory, a FIFO, a device or an unreadable
    /// file is an error naming the file and the cause.
    static func read(_ path: String) throws(CLIError) -> [UInt8] {
        switch try status(path) {
        case .missing: throw .failure("\(path): cannot read file: no such file")
        case .other(let kind): throw .failure("\(path): cannot read file: it is \(kind), not a file")
        case .file: break
        }
        let fd = retrying { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        guard fd >= 0 else { throw .failure("\(path): cannot read file: \(reason(errno))") }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0 else { throw .failure("\(path): cannot read file: \(reason(errno))") }
        guard (s.st_mode & S_IFMT) == S_IFREG else {
            throw .failure("\(path): cannot read file: it is \(kind(s.st_mode)), not a file")
        }
        guard Int(s.st_size) <= readLimit else {
            throw .failure("\(path): cannot read file: it is \(s.st_size) bytes, larger than the limit of \(readLimit)")
        }
        return try readAll(fd, name: path, sizeHint: Int(s.st_size))
    }

    /// Everything readable from `fd`, up to ``readLimit``.
    static func readAll(_ fd: Int32, name: String, sizeHint: Int = 0) throws(CLIError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(sizeHint, 4096) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= readLimit else {
                    throw .failure("\(name): cannot read: larger than the limit of \(readLimit) bytes")
                }
                bytes.append(contentsOf: repeatElement(0, count: bytes.count))
            }
            let n = bytes.withUnsafeMutableBytes { buffer in
                retrying { systemRead(fd, buffer.baseAddress.map { $0 + count }, buffer.count - count) }
            }
            if n < 0 {
                if errno == EAGAIN { continue }
                throw .failure("\(name): cannot read: \(reason(errno))")
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// The path a file is really kept at: through symbolic links, as the library saves (a
    /// dotfile manager's link stays a link; the file it leads to is replaced).
    static func resolvingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<32 {
            var s = stat()
            guard lstat(current, &s) == 0, (s.st_mode & S_IFMT) == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { return current }
            let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : directory(of: current) + "/" + target
        }
        return current
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// How a new file is created.
    enum NewFile {
        /// As any tool creates a file: `0666` less the umask.
        case ordinary
        /// Owner-only (`0600`), as the library creates settings files.
        case ownerOnly
    }

    /// Replaces the file at `path` (through symbolic links) with `bytes`, atomically and durably:
    /// a temporary file beside it is written, flushed, given the old file's permission bits
    /// (`& 0o777`: never set-ID or sticky) and owner, and renamed over it; the directory is
    /// flushed. A new file gets the permissions `new` says.
    static func replace(_ path: String, with bytes: [UInt8], new: NewFile = .ordinary) throws(CLIError) {
        let target = resolvingLinks(path)
        var mode: mode_t
        var owner: (uid_t, gid_t)?
        var s = stat()
        if stat(target, &s) == 0 {
            guard (s.st_mode & S_IFMT) == S_IFREG else {
                throw .failure("\(path): cannot write file: it is \(kind(s.st_mode)), not a file")
            }
            mode = s.st_mode & 0o777
            owner = (s.st_uid, s.st_gid)
        } else if errno == ENOENT {
            switch new {
            case .ordinary:
                let mask = umask(0o022)
                umask(mask)
                mode = 0o666 & ~mask
            case .ownerOnly:
                mode = 0o600
            }
        } else {
            throw .failure("\(path): cannot write file: \(reason(errno))")
        }
        let directory = directory(of: target)
        let temporary = directory + "/." + name(of: target) + ".tmp-\(getpid())-settings"
        unlink(temporary)  // left by a killed process that had this process ID
        let fd = retrying { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard fd >= 0 else {
            throw .failure("\(path): cannot write file: cannot create a temporary file in \(directory): \(reason(errno))")
        }
        var failure: CLIError?
        if let (user, group) = owner, user != geteuid() || group != getegid() {
            // Only root (or a member of the group) may; otherwise the file becomes the writer's,
            // as any editor's save would make it.
            _ = fchown(fd, user, group)
        }
        if fchmod(fd, mode) != 0 {
            failure = .failure("\(path): cannot write file: cannot set its permissions: \(reason(errno))")
        } else if let problem = writeAll(fd, bytes) {
            failure = .failure("\(path): cannot write file: \(reason(problem))")
        } else if fsync(fd) != 0 {
            failure = .failure("\(path): cannot write file: cannot flush it to disk: \(reason(errno))")
        }
        close(fd)
        if failure == nil, rename(temporary, target) != 0 {
            failure = .failure("\(path): cannot write file: \(reason(errno))")
        }
        if let failure {
            unlink(temporary)
            throw failure
        }
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
    }

    /// Writes all of `bytes`; the `errno` of a failure, or `nil`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBytes { raw -> Int32? in
            guard let base = raw.baseAddress else { return nil }
            var done = 0
            while done < raw.count {
                let n = retrying { systemWrite(fd, base + done, raw.count - done) }
                if n < 0 { return errno }
                done += n
            }
            return nil
        }
    }

    /// Creates the directories of a new settings file, owner-only, as the library does.
    static func createDirectories(for path: String) throws(CLIError) {
        let directory = directory(of: path)
        var s = stat()
        if stat(directory, &s) == 0 {
            guard (s.st_mode & S_IFMT) == S_IFDIR else {
                throw .failure("\(path): cannot write file: \(directory) is not a directory")
            }
            return
        }
        guard errno == ENOENT else { throw .failure("\(path): cannot write file: \(directory): \(reason(errno))") }
        try createDirectories(for: directory)
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw .failure("\(path): cannot write file: cannot create \(directory): \(reason(errno))")
        }
    }

    /// Takes the advisory lock the Settings library takes before saving a settings file:
    /// `flock` on `.NAME.lock` beside the file (through links). Waits up to two seconds for
    /// another process. Release it with `close`.
    static func lock(for path: String) throws(CLIError) -> Int32 {
        let target = resolvingLinks(path)
        let lockPath = directory(of: target) + "/." + name(of: target) + ".lock"
        let fd = retrying { open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o600) }
        guard fd >= 0 else { throw .failure("\(path): cannot open the lock file \(lockPath): \(reason(errno))") }
        var s = stat()
        guard fstat(fd, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .failure("\(path): the lock file \(lockPath) is not a regular file; refusing to use it")
        }
        let start = ContinuousClock.now
        var pause = 1_000  // microseconds
        while retrying({ flock(fd, LOCK_EX | LOCK_NB) }) != 0 {
            let code = errno
            guard code == EWOULDBLOCK else {
                close(fd)
                throw .failure("\(path): cannot lock \(lockPath): \(reason(code))")
            }
            guard ContinuousClock.now - start < .seconds(2) else {
                close(fd)
                throw .failure("\(path): another process held the lock \(lockPath) for longer than 2 seconds; not written")
            }
            usleep(useconds_t(pause))
            pause = min(pause * 2, 50_000)
        }
        return fd
    }

    /// Calls `body` again while it fails with `EINTR`.
    static func retrying<T: SignedInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}
