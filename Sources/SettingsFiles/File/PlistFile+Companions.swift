import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PlistFile {
    /// The directory that keeps what belongs to a settings file but must not be inside it, so
    /// other readers of the plist still see a plain plist: its history, who changed each key, the
    /// schema the application wrote. `.NAME.meta` beside the file, the one place the name is built
    /// (the library, the tool and the integrations all use it).
    ///
    /// ```swift
    /// PlistFile.companionDirectory(for: "/home/ada/.config/App/settings.plist")
    /// // "/home/ada/.config/App/.settings.plist.meta"
    /// ```
    ///
    /// - Parameter target: the settings file, after the link rule (``Target/path``).
    /// - Returns: the companion directory's path.
    public static func companionDirectory(for target: String) -> String {
        // `directory(of:) + "/." + name(of:) + ".meta"`, built in one pass over the bytes.
        var target = target
        return target.withUTF8 { bytes in
            let slash = lastSlash(in: bytes)
            let name = UnsafeBufferPointer(rebasing: bytes[(slash.map { $0 + 1 } ?? 0)...])
            return String(unsafeUninitializedCapacity: bytes.count + 8) { out in
                var at = 0
                func put(_ part: UnsafeBufferPointer<UInt8>) {
                    _ = UnsafeMutableBufferPointer(rebasing: out[at ..< at + part.count]).initialize(from: part)
                    at += part.count
                }
                if let slash {
                    put(UnsafeBufferPointer(rebasing: bytes[..<max(slash, 1)]))  // "/" for a file at the root
                } else {
                    StaticString(".").withUTF8Buffer(put)  // a bare name
                }
                StaticString("/.").withUTF8Buffer(put)
                put(name)
                StaticString(".meta").withUTF8Buffer(put)
                return at
            }
        }
    }

    /// Makes sure the companion directory of `target` exists and is safe to write in, creating it
    /// owner-only (`0700`) when it is missing.
    ///
    /// It is never reached through a symbolic link and must be a directory that belongs to the
    /// process's effective user, with no access for anyone else: a link, a file, another user's
    /// directory or one others can write to is refused (nothing is created or written there).
    /// It is created only in a directory that belongs to the effective user.
    ///
    /// ```swift
    /// let meta = try PlistFile.makeCompanionDirectory(for: target.path)
    /// _ = try PlistFile.replace(meta + "/provenance.plist", with: bytes, permissions: 0o600)
    /// ```
    ///
    /// - Parameter target: the settings file, after the link rule (``Target/path``).
    /// - Returns: the companion directory's path.
    /// - Throws: ``Failure``: `EPERM` for a link, another user's directory or one open to others;
    ///   `ENOTDIR` for something that is not a directory; the `mkdir` error otherwise.
    @discardableResult
    public static func makeCompanionDirectory(for target: String) throws(Failure) -> String {
        let path = companionDirectory(for: target)
        var s = stat()
        if lstat(path, &s) != 0 {
            guard errno == ENOENT else { throw Failure("cannot look at \(path)") }
            guard belongsToUser(directory: directory(of: target)) else {
                throw Failure("\(path) is missing and its directory does not belong to this process's user; it is not created", code: EPERM)
            }
            if mkdir(path, 0o700) != 0, errno != EEXIST { throw Failure("cannot create \(path)") }
            guard lstat(path, &s) == 0 else { throw Failure("cannot look at \(path)") }
        }
        return try checkCompanion(path, s)
    }

    /// The companion directory of `target` when it exists and is safe to read (the same checks
    /// as ``makeCompanionDirectory(for:)``), or `nil` when it does not exist.
    ///
    /// - Parameter target: the settings file, after the link rule (``Target/path``).
    /// - Returns: the companion directory's path, or `nil`.
    /// - Throws: ``Failure`` as ``makeCompanionDirectory(for:)`` does for an unsafe one.
    public static func existingCompanionDirectory(for target: String) throws(Failure) -> String? {
        let path = companionDirectory(for: target)
        var s = stat()
        guard lstat(path, &s) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Failure("cannot look at \(path)")
        }
        return try checkCompanion(path, s)
    }

    /// Refuses a companion directory that is a link, not a directory, another user's, or open to others.
    static func checkCompanion(_ path: String, _ s: stat) throws(Failure) -> String {
        let kind = s.st_mode & S_IFMT
        guard kind != S_IFLNK else {
            throw Failure("\(path) is a symbolic link; it is not followed, and nothing is read or written through it", code: EPERM)
        }
        guard kind == S_IFDIR else { throw Failure("\(path) is a \(PlistFile.kind(s.st_mode)), not a directory", code: ENOTDIR) }
        guard s.st_uid == geteuid() else {
            throw Failure("\(path) belongs to user \(s.st_uid), not to this process's user (\(geteuid())); nothing is read or written there", code: EPERM)
        }
        guard s.st_mode & 0o022 == 0 else {
            throw Failure("\(path) can be written by other users (mode \(String(s.st_mode & 0o777, radix: 8))); nothing is read or written there", code: EPERM)
        }
        return path
    }
}
