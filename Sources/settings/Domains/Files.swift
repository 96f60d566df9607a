#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// The tool's file operations: SettingsPlist's ``PlistFile`` (the rules the Settings library
/// keeps too: bounded reads that never block on a FIFO or open a device, atomic replacements
/// that keep the file's permissions and owner, the link rule and the library's lock), with
/// every failure turned into one line naming the file and the real cause.
enum Files {
    /// What is at a path (following symbolic links).
    enum Status {
        case missing
        case file
        /// It exists but is not a regular file: a directory, a FIFO, a device.
        case other(String)
    }

    /// Looks at `path` (following links). Permission problems and the like are errors naming the file.
    static func status(_ path: String) throws(CLIError) -> Status {
        var s = stat()
        guard stat(path, &s) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return .missing }
            throw .failure("\(path): cannot read file: \(PlistFile.reason(errno))")
        }
        guard (s.st_mode & S_IFMT) == S_IFREG else { return .other(PlistFile.kind(UInt32(s.st_mode))) }
        return .file
    }

    /// The whole file at `path` (through links), up to ``PlistFile/maximumSize``. A missing
    /// file, a directory, a FIFO, a device, an unreadable or too large file is an error naming
    /// the file and the cause.
    static func read(_ path: String) throws(CLIError) -> [UInt8] {
        if case .other(let kind) = try status(path) { throw .failure("\(path): cannot read file: it is \(kind), not a file") }
        do {
            guard let contents = try PlistFile.read(path) else { throw CLIError.failure("\(path): cannot read file: no such file") }
            return contents.bytes
        } catch let failure as PlistFile.Failure {
            throw .failure("\(path): cannot read file: \(failure.code == EFBIG || failure.code == EINVAL ? failure.operation : PlistFile.reason(failure.code))")
        } catch {
            throw error as? CLIError ?? .failure("\(path): cannot read file: \(error)")
        }
    }

    /// Everything readable from `fd` (standard input), up to ``PlistFile/maximumSize``.
    static func readAll(_ fd: Int32, name: String) throws(CLIError) -> [UInt8] {
        do {
            return try PlistFile.readAll(fd)
        } catch {
            throw .failure("\(name): cannot read: \(error.code == EFBIG ? error.operation : PlistFile.reason(error.code))")
        }
    }

    /// Writes all of `bytes` to `fd`; `false` when it failed (a closed pipe).
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in (try? PlistFile.writeAll(fd, raw)) != nil }
    }

    /// Where the file named `path` is really kept, by the library's link rule: a link is
    /// followed only when it belongs to the tool's user (see ``PlistFile/target(of:)``).
    static func target(of path: String) throws(CLIError) -> PlistFile.Target {
        do {
            return try PlistFile.target(of: path)
        } catch {
            throw .failure("\(path): cannot write file: \(error.operation)")
        }
    }

    /// How a new file is created.
    enum NewFile {
        /// As any tool creates a file: `0666` less the umask.
        case ordinary
        /// Owner-only (`0600`), as the library creates settings files.
        case ownerOnly
    }

    /// Replaces the file at `path` (through the links the link rule follows) with `bytes`,
    /// atomically and durably (``PlistFile/replace(_:with:permissions:owner:durable:)-(_,[UInt8],_,_,_)``),
    /// keeping the old file's permission bits and owner. A new file gets the permissions `new`
    /// says. More than ``PlistFile/maximumSize`` is never written: the library could not load it.
    static func replace(_ path: String, with bytes: [UInt8], new: NewFile = .ordinary) throws(CLIError) {
        guard bytes.count <= PlistFile.maximumSize else {
            throw .failure("\(path): cannot write file: \(PlistFile.tooLarge(bytes.count).operation); not written")
        }
        let target = try target(of: path).path
        let permissions: UInt32
        var owner: PlistFile.Owner?
        var s = stat()
        if stat(target, &s) == 0 {
            guard (s.st_mode & S_IFMT) == S_IFREG else {
                throw .failure("\(path): cannot write file: it is \(PlistFile.kind(UInt32(s.st_mode))), not a file")
            }
            permissions = UInt32(s.st_mode & 0o777)
            owner = PlistFile.Owner(user: UInt32(s.st_uid), group: UInt32(s.st_gid))
        } else if errno == ENOENT {
            switch new {
            case .ordinary:
                let mask = umask(0o022)
                umask(mask)
                permissions = UInt32(0o666 & ~mask)
            case .ownerOnly:
                permissions = 0o600
            }
        } else {
            throw .failure("\(path): cannot write file: \(PlistFile.reason(errno))")
        }
        do {
            try PlistFile.replace(target, with: bytes, permissions: permissions, owner: owner)
        } catch {
            throw .failure("\(path): cannot write file: \(error)")
        }
    }

    /// Takes the advisory lock the Settings library takes before saving the settings file at
    /// `target` (``PlistFile/lockPath(for:)``, ``PlistFile/tryLock(_:)``), waiting up to two
    /// seconds for another process.
    ///
    /// A lock file left beside a file that is not a settings domain would litter the user's
    /// project folder (`settings write ./Defaults.plist …`). So the lock file is kept only
    /// beside a file named by application (`settings write MyApp …`) or where a program already
    /// made one; one this call created for a plain file is removed by ``unlock(_:domain:)``,
    /// while still held, which every taker of the lock tolerates (they check the file they
    /// locked is still the lock file). In a directory that is not the user's, where no lock
    /// file may be created, a plain file is edited without one (as any editor would) and `nil`
    /// is returned.
    static func lock(for target: String, path: String, isApplication: Bool) throws(CLIError) -> PlistFile.Lock? {
        let lockPath = PlistFile.lockPath(for: target)
        if !isApplication, !PlistFile.belongsToUser(directory: PlistFile.directory(of: target)),
           (try? PlistFile.identity(of: lockPath)) == .some(nil) {
            return nil
        }
        let lock: PlistFile.Lock?
        do {
            lock = try PlistFile.lock(lockPath, waitingAtMost: .seconds(2))
        } catch {
            throw .failure("\(path): \(error)")
        }
        guard let lock else {
            throw .failure("\(path): another process held the lock \(lockPath) for longer than 2 seconds; not written")
        }
        return lock
    }

    /// Releases a lock taken with ``lock(for:path:isApplication:)``, removing a lock file it
    /// created beside a file that is not an application's domain.
    static func unlock(_ lock: PlistFile.Lock?, isApplication: Bool) {
        lock?.release(removingFile: lock?.created == true && !isApplication)
    }
}
