#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import SettingsPlist
import CSettingsFiles
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PlistFile {
    /// Replaces the file at `path` with `bytes`, durably and atomically.
    ///
    /// A temporary file with an unpredictable name (``temporaryPrefix(for:)`` followed by 16
    /// random hexadecimal digits) is created in the same directory with
    /// `O_CREAT|O_EXCL|O_NOFOLLOW` (so nothing planted there, a link above all, is ever opened),
    /// written, flushed to disk, given `permissions` (set-user-ID, set-group-ID and sticky bits
    /// are never carried over) and `owner`, and renamed over `path`; the directory is flushed so
    /// the rename itself survives a crash. On failure the temporary file is removed and `path`
    /// is unchanged.
    ///
    /// `path` is replaced as it is: apply the link rule first (``target(of:)``) to save through
    /// a link to its target.
    ///
    /// ```swift
    /// let old = try PlistFile.identity(of: path)
    /// let new = try PlistFile.replace(path, with: bytes,
    ///                                 permissions: old?.permissions ?? 0o600, owner: old?.owner)
    /// ```
    ///
    /// - Parameters:
    ///   - path: the file to replace (or create).
    ///   - bytes: its new contents.
    ///   - permissions: its permission bits (`& 0o777` is applied).
    ///   - owner: its owner and group, kept when the process may give them (root, or a member of
    ///     the group); `nil` leaves the writer's.
    ///   - durable: `false` skips the two flushes to disk (file and directory): the replacement
    ///     is still atomic for every reader, but a power loss may take it back. For what can be
    ///     lost without harm (a settings file's history and provenance), never the settings file.
    /// - Returns: the identity of the new file.
    /// - Throws: ``Failure`` naming the step that failed.
    @discardableResult
    public static func replace(
        _ path: String, with bytes: [UInt8], permissions: UInt32, owner: Owner? = nil, durable: Bool = true
    ) throws(Failure) -> Identity {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(Failure) in try replace(path, raw, permissions: permissions, owner: owner, durable: durable) }
        }.get()
    }

    /// Replaces the file at `path` with `data`, durably and atomically: see
    /// ``replace(_:with:permissions:owner:durable:)-(_,[UInt8],_,_,_)``.
    ///
    /// ```swift
    /// try PlistFile.replace(path, with: try value.encoded(as: .binary), permissions: 0o600)
    /// ```
    ///
    /// - Parameters:
    ///   - path: the file to replace (or create).
    ///   - data: its new contents.
    ///   - permissions: its permission bits (`& 0o777` is applied).
    ///   - owner: its owner and group, kept when the process may give them; `nil` leaves the writer's.
    ///   - durable: `false` skips the flushes to disk (see the other form).
    /// - Returns: the identity of the new file.
    /// - Throws: ``Failure`` naming the step that failed.
    @discardableResult
    public static func replace(
        _ path: String, with data: Data, permissions: UInt32, owner: Owner? = nil, durable: Bool = true
    ) throws(Failure) -> Identity {
        try data.withUnsafeBytes { raw in
            Result { () throws(Failure) in try replace(path, raw, permissions: permissions, owner: owner, durable: durable) }
        }.get()
    }

    /// ``replace(_:with:permissions:owner:durable:)-(_,[UInt8],_,_,_)``, keeping the new file
    /// open (``Held``) for a writer that trusts its identity later.
    package static func replaceHolding(_ path: String, with bytes: [UInt8], permissions: UInt32, durable: Bool) throws(Failure) -> Held {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(Failure) in try replaceKeepingOpen(path, raw, permissions: permissions, owner: nil, durable: durable) }
        }.get()
    }

    private static func replace(
        _ path: String, _ bytes: UnsafeRawBufferPointer, permissions: UInt32, owner: Owner?, durable: Bool
    ) throws(Failure) -> Identity {
        try replaceKeepingOpen(path, bytes, permissions: permissions, owner: owner, durable: durable).identity
    }

    private static func replaceKeepingOpen(
        _ path: String, _ bytes: UnsafeRawBufferPointer, permissions: UInt32, owner: Owner?, durable: Bool
    ) throws(Failure) -> Held {
        let replacement = try Replacement(path, writing: { fd throws(Failure) in try writeAll(fd, bytes) },
                                          permissions: permissions, owner: owner, durable: durable)
        return try replacement.commitHolding()
    }

    /// A replacement of a file begun but not made yet: the new bytes are in a temporary file
    /// beside it, and their way to the disk has started. ``commit()`` makes it (flush, rename,
    /// flush the directory); ``abandon()`` removes the temporary file and leaves the file as it
    /// is. Exactly one of the two is called (the descriptor is closed by it).
    ///
    /// What a writer does between the two overlaps the device writing the new bytes: a settings
    /// file's transaction records its history and provenance there, so the flush at
    /// ``commit()`` waits for less (measured in Docs/Performance.md).
    package struct Replacement {
        private let path: String
        private let temporary: String
        private let fd: Int32
        private let durable: Bool

        /// Creates the temporary file, gives it `permissions` and `owner`, and writes `bytes`.
        ///
        /// - Parameter overlapped: whether other work comes before ``commit()`` (a record step):
        ///   then the bytes start on their way to the device now, without waiting (Linux's
        ///   `sync_file_range`), and the flush at ``commit()`` waits for less. With nothing to
        ///   overlap, starting the write-back costs more than it saves (measured in
        ///   Docs/Performance.md), and the flush does it all.
        package init(_ path: String, with bytes: Data, permissions: UInt32, owner: Owner?, durable: Bool = true,
                     overlapped: Bool = false) throws(Failure) {
            try self.init(path, writing: { fd throws(Failure) in
                try bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try PlistFile.writeAll(fd, raw) } }.get()
            }, permissions: permissions, owner: owner, durable: durable, overlapped: overlapped)
        }

        fileprivate init(_ path: String, writing write: (Int32) throws(Failure) -> Void, permissions: UInt32, owner: Owner?,
                     durable: Bool, overlapped: Bool = false) throws(Failure) {
            let directory = PlistFile.directory(of: path)
            var temporary = ""
            var fd: Int32 = -1
            for _ in 0..<8 {  // a name taken already (never in practice): draw another
                temporary = directory + "/" + PlistFile.temporaryPrefix(for: path) + PlistFile.randomSuffix()
                fd = PlistFile.createExclusively(temporary)
                if fd >= 0 || errno != EEXIST { break }
            }
            guard fd >= 0 else { throw Failure("cannot create a temporary file in \(directory)") }
            do throws(Failure) {
                if let owner, owner.user != geteuid() || owner.group != getegid() {
                    // Only root (or a member of the group) may do this; otherwise the file keeps the
                    // writer's ownership, as any editor's save would.
                    _ = fchown(fd, uid_t(owner.user), gid_t(owner.group))
                }
                guard fchmod(fd, mode_t(permissions & 0o777)) == 0 else { throw Failure("cannot set the file's permissions") }
                try write(fd)
                // Only starts the write-back (never waits for it): the flush at commit still
                // decides durability, and a failure here is the flush's to report.
                if durable && overlapped { _ = settings_start_writeback(fd) }
            } catch {
                close(fd)
                unlink(temporary)
                throw error
            }
            self.path = path
            self.temporary = temporary
            self.fd = fd
            self.durable = durable
        }

        /// Makes the replacement: flushes the new bytes (when durable), renames the temporary
        /// file over the file and flushes the directory. On failure the temporary file is
        /// removed and the file is unchanged.
        ///
        /// - Returns: the identity of the new file.
        package func commit() throws(Failure) -> Identity {
            try commitHolding().identity
        }

        /// ``commit()``, keeping the new file open (``Held``) for a writer that trusts its
        /// identity at its next change: the descriptor it was written through, so holding it
        /// costs no system call.
        ///
        /// - Parameter renamed: run once the file is replaced, before the directory is flushed
        ///   (a transaction confirms its history there).
        package func commitHolding(renamed: () -> Void = {}) throws(Failure) -> Held {
            let identity: Identity
            do throws(Failure) {
                guard !durable || PlistFile.flushToDisk(fd) else { throw Failure("cannot flush the file to disk") }
                var s = stat()
                guard fstat(fd, &s) == 0 else { throw Failure("cannot examine the file") }
                identity = Identity(s)
            } catch {
                close(fd)
                unlink(temporary)
                throw error
            }
            let held = Held(fd: fd, identity: identity)  // closes it on every way out
            guard rename(temporary, path) == 0 else {
                let failure = Failure("cannot replace the file")
                unlink(temporary)
                throw failure
            }
            renamed()
            if durable { PlistFile.syncDirectory(PlistFile.directory(of: path)) }
            return held
        }

        /// Gives the replacement up: the temporary file is removed, the file left as it is.
        package func abandon() {
            close(fd)
            unlink(temporary)
        }
    }

    /// The start of the names of ``replace(_:with:permissions:owner:durable:)-(_,[UInt8],_,_,_)``'s
    /// temporary files beside `path`: `.NAME.tmp-`. They exist only while a writer holds the
    /// file's lock; any seen by a lock holder were left by a writer killed mid-save (see
    /// ``removeLeftoverTemporaryFiles(beside:)``).
    ///
    /// - Parameter path: the file.
    /// - Returns: the prefix (a name, not a path).
    public static func temporaryPrefix(for path: String) -> String {
        "." + name(of: path) + ".tmp-"
    }

    /// Removes the temporary files a killed writer left beside `path`. Call it only with the
    /// file's lock held (others' temporary files exist only while they hold it).
    ///
    /// ```swift
    /// PlistFile.removeLeftoverTemporaryFiles(beside: target)
    /// ```
    ///
    /// - Parameter path: the file.
    public static func removeLeftoverTemporaryFiles(beside path: String) {
        let directory = directory(of: path)
        let prefix = temporaryPrefix(for: path)
        let names = entryNames(inDirectory: directory) ?? []
        for name in names where name.hasPrefix(prefix) { unlink(directory + "/" + name) }
    }

    /// Removes the temporary files a killed writer left beside `path` when it is written
    /// without the settings file's lock (the layers manifest): only those last changed more than
    /// `age` seconds ago, so a writer in the middle of its replacement keeps its own.
    package static func removeLeftoverTemporaryFiles(beside path: String, olderThan age: Int) {
        let directory = directory(of: path)
        let prefix = temporaryPrefix(for: path)
        let now = time(nil)
        for name in entryNames(inDirectory: directory) ?? [] where name.hasPrefix(prefix) {
            var s = stat()
            let file = directory + "/" + name
            guard lstat(file, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
            let changed = s.st_mtimespec.tv_sec
            #else
            let changed = s.st_mtim.tv_sec
            #endif
            guard now - changed > age else { continue }
            unlink(file)
        }
    }

    /// The names of a directory's entries (with `.` and `..`), in the order the system lists
    /// them, or `nil` when it cannot be opened.
    ///
    /// Each name is read in place, up to its terminating zero: `readdir` packs its entries
    /// (each only as long as its name needs), so copying a whole `dirent` (or its 256-byte
    /// `d_name`) reads past the last one, off the end of the system's buffer when that is the
    /// end of mapped memory (seen: a crash saving 300 files at exit under load).
    ///
    /// - Parameter directory: the directory's path.
    package static func entryNames(inDirectory directory: String) -> [String]? {
        guard let dir = opendir(directory.isEmpty ? "/" : directory) else { return nil }
        defer { closedir(dir) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \.d_name) ?? 0
        var names: [String] = []
        while let entry = readdir(dir) {
            names.append(String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self)))
        }
        return names
    }

    /// Flushes a directory's entries to disk (best effort: some file systems refuse it).
    ///
    /// - Parameter directory: the directory.
    package static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = flushToDisk(fd)
        close(fd)
    }

    /// Flushes a file's data to the storage itself: `fsync`, and on Apple platforms
    /// `fcntl(F_FULLFSYNC)`, since their `fsync` leaves the data in the drive's cache, where a
    /// power cut loses it (SQLite's `fullfsync`). A file system that refuses `F_FULLFSYNC` (some
    /// network and FUSE file systems) gets `fsync`.
    ///
    /// ```swift
    /// guard PlistFile.flushToDisk(fd, dataOnly: true) else { throw PlistFile.Failure("cannot flush") }
    /// ```
    ///
    /// - Parameters:
    ///   - fd: the open file or directory.
    ///   - dataOnly: for a file overwritten in place at the same size, `fdatasync` where there is
    ///     one (the file's times are not flushed; its data and size are).
    /// - Returns: whether the flush succeeded.
    public static func flushToDisk(_ fd: Int32, dataOnly: Bool = false) -> Bool {
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == 0 { return true }
        return fsync(fd) == 0
        #else
        return (dataOnly ? fdatasync(fd) : fsync(fd)) == 0
        #endif
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`.
    ///
    /// - Parameters:
    ///   - fd: an open descriptor.
    ///   - bytes: what to write.
    /// - Throws: ``Failure`` with the write's `errno`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = retrying { systemWrite(fd, base + done, bytes.count - done) }
            if n < 0 { throw Failure("cannot write the file") }
            done += n
        }
    }

    /// Writes all of `bytes` to `fd` at `offset` (`pwrite`: the descriptor's own position is
    /// not moved), retrying short writes and `EINTR`: for a file overwritten in place.
    ///
    /// ```swift
    /// try bytes.withUnsafeBytes { try PlistFile.writeAll(fd, $0, at: 4096) }
    /// ```
    ///
    /// - Parameters:
    ///   - fd: an open descriptor.
    ///   - bytes: what to write.
    ///   - offset: where in the file.
    /// - Throws: ``Failure`` with the write's `errno`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) throws(Failure) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = retrying { pwrite(fd, base + done, bytes.count - done, off_t(offset + done)) }
            if n < 0 { throw Failure("cannot write the file") }
            if n == 0 { throw Failure("cannot write the file", code: EIO) }
            done += n
        }
    }

    /// Creates a new file at `path` (owner-only, write-only), never opening anything already
    /// there: a file or a link planted at that name fails with `EEXIST`. Returns the
    /// descriptor, or -1 with `errno` set.
    static func createExclusively(_ path: String) -> Int32 {
        retrying { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0o600) }
    }

    /// 16 hexadecimal digits from the system's random source.
    static func randomSuffix() -> String {
        let value = UInt64.random(in: .min ... .max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
