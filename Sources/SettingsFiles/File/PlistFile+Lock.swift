import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PlistFile {
    /// An exclusive advisory lock (`flock`) on a lock file, held until ``release(removingFile:)``.
    public struct Lock: Sendable {
        /// The descriptor holding the lock.
        public let descriptor: Int32
        /// The lock file.
        public let path: String
        /// Whether this call created the lock file (it did not exist before).
        public let created: Bool

        /// Releases the lock (closing the descriptor drops it).
        ///
        /// With `removingFile`, the lock file is first removed, while the lock is still held.
        /// That is safe because every taker of the lock (``tryLock(_:)``) checks, once it holds
        /// a lock, that the lock file is still the file it locked, and starts again when it is
        /// not: a process that was waiting on the removed file never believes it holds the lock
        /// while another process holds the new one.
        ///
        /// ```swift
        /// lock.release(removingFile: lock.created)  // leave nothing behind that was not there
        /// ```
        ///
        /// - Parameter removingFile: whether to remove the lock file before releasing it.
        public func release(removingFile: Bool = false) {
            if removingFile { unlink(path) }
            close(descriptor)
        }
    }

    /// The lock file of the settings file at `target`: `.NAME.lock` in the same directory. The
    /// one place this name is made (the library's store and model files, the `settings` tool and
    /// the sync integration all lock the same file).
    ///
    /// ```swift
    /// PlistFile.lockPath(for: "/home/ada/.config/App/settings.plist")
    /// // "/home/ada/.config/App/.settings.plist.lock"
    /// ```
    ///
    /// - Parameter target: the settings file, after the link rule (``Target/path``).
    /// - Returns: the lock file's path.
    public static func lockPath(for target: String) -> String {
        directory(of: target) + "/." + name(of: target) + ".lock"
    }

    /// Tries once, without waiting, to take an exclusive advisory lock on the lock file at
    /// `path`, creating it (owner-only) when it is missing.
    ///
    /// The lock file is never reached through a symbolic link (`O_NOFOLLOW`) and must be a
    /// regular file: a link or anything else planted in its place (which could make a
    /// privileged writer create or truncate a file elsewhere) is refused. It is created only in
    /// a directory that belongs to the process's effective user; elsewhere an existing lock
    /// file is used, and a missing one is an error (`EPERM`). Opening never blocks.
    ///
    /// ```swift
    /// guard let lock = try PlistFile.tryLock(PlistFile.lockPath(for: target)) else {
    ///     return  // another process holds it: try again later
    /// }
    /// defer { lock.release() }
    /// ```
    ///
    /// - Parameter path: the lock file (``lockPath(for:)``).
    /// - Returns: the lock, or `nil` when another process holds it.
    /// - Throws: ``Failure`` naming the lock file and the cause.
    public static func tryLock(_ path: String) throws(Failure) -> Lock? {
        try takeLock(path, waiting: false)
    }

    /// Takes the lock at `path` as ``tryLock(_:)`` does, trying again (1 ms, then doubling up to
    /// 50 ms between tries) while another process holds it, for at most `timeout`. It blocks the
    /// calling thread: for synchronous callers (the `settings` tool, a model file's `save`),
    /// never for Swift's cooperative pool.
    ///
    /// ```swift
    /// guard let lock = try PlistFile.lock(lockPath, waitingAtMost: .seconds(2)) else {
    ///     throw Busy()  // held elsewhere all that time
    /// }
    /// defer { lock.release() }
    /// ```
    ///
    /// - Parameters:
    ///   - path: the lock file (``lockPath(for:)``).
    ///   - timeout: the longest wait.
    /// - Returns: the lock, or `nil` when another process held it for all of `timeout`.
    /// - Throws: ``Failure`` as ``tryLock(_:)`` does.
    public static func lock(_ path: String, waitingAtMost timeout: Duration) throws(Failure) -> Lock? {
        let start = ContinuousClock.now
        var pause = 1_000_000  // nanoseconds
        while true {
            if let lock = try tryLock(path) { return lock }
            guard ContinuousClock.now - start < timeout else { return nil }
            var request = timespec(tv_sec: 0, tv_nsec: pause)
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
            pause = min(pause * 2, 50_000_000)
        }
    }

    /// Takes the lock at `path`, waiting in `flock` as long as another process holds it. Only
    /// for a thread of its own that can be abandoned (the Settings store's lock waiter): the
    /// wait has no bound.
    package static func waitForLock(_ path: String) throws(Failure) -> Lock? {
        try takeLock(path, waiting: true)
    }

    private static func takeLock(_ path: String, waiting: Bool) throws(Failure) -> Lock? {
        // A lock file removed (or replaced) by its holder while this process waited on it is
        // not the lock any more: start again on the file now there. Each round needs another
        // process to remove the file under its lock, so a few rounds are plenty.
        for _ in 0..<64 {
            let (fd, created) = try openLockFile(path)
            guard retrying({ flock(fd, waiting ? LOCK_EX : LOCK_EX | LOCK_NB) }) == 0 else {
                let code = errno
                close(fd)
                if code == EWOULDBLOCK { return nil }
                throw Failure("cannot lock \(path)", code: code)
            }
            var held = stat(), now = stat()
            if fstat(fd, &held) == 0, lstat(path, &now) == 0, held.st_dev == now.st_dev, held.st_ino == now.st_ino {
                return Lock(descriptor: fd, path: path, created: created)
            }
            close(fd)
        }
        throw Failure("the lock file \(path) keeps being removed and created again", code: EAGAIN)
    }

    /// Creates the lock file at `path` already locked, so no other taker can open it and take the
    /// lock before its creator does (the creator, which alone removes it again, would then leave
    /// it behind): a file of its own name is created, locked, and hard-linked into place. Where
    /// hard links are not supported it is created in place. Returns the descriptor, or -1 with
    /// `errno` set (`EEXIST` when another process created the lock file first).
    private static func createLocked(_ path: String) -> Int32 {
        let flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CREAT | O_EXCL
        let temporary = directory(of: path) + "/" + temporaryPrefix(for: path) + randomSuffix()
        let fd = retrying { open(temporary, flags, 0o600) }
        guard fd >= 0 else { return retrying { open(path, flags, 0o600) } }
        _ = retrying { flock(fd, LOCK_EX | LOCK_NB) }  // nobody else knows the file: never busy
        let linked = link(temporary, path)
        let code = errno
        unlink(temporary)
        if linked == 0 { return fd }
        close(fd)
        guard code != EEXIST else {
            errno = EEXIST
            return -1
        }
        return retrying { open(path, flags, 0o600) }  // no hard links here: create it in place
    }

    /// Opens (or creates) the lock file: never through a link, never blocking, only a regular file.
    private static func openLockFile(_ path: String) throws(Failure) -> (Int32, created: Bool) {
        let flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY
        for _ in 0..<64 {
            var fd = retrying { open(path, flags) }
            var created = false
            if fd < 0, errno == ENOENT {
                let directory = directory(of: path)
                guard belongsToUser(directory: directory) else {
                    throw Failure("will not create the lock file \(path): \(directory) does not belong to this process's user (\(geteuid()))", code: EPERM)
                }
                fd = createLocked(path)
                if fd < 0, errno == EEXIST { continue }  // created meanwhile by another process: open that
                created = true
            }
            guard fd >= 0 else {
                if errno == ELOOP { throw Failure("the lock file \(path) is a symbolic link; refusing to use it", code: ELOOP) }
                throw Failure("cannot open the lock file \(path)")
            }
            var s = stat()
            guard fstat(fd, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG else {
                close(fd)
                throw Failure("the lock file \(path) is not a regular file; refusing to use it", code: EINVAL)
            }
            return (fd, created)
        }
        throw Failure("the lock file \(path) keeps being removed and created again", code: EAGAIN)
    }
}
