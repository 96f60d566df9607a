import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PlistFile {
    /// Where a property-list file is really kept, by the link rule (see ``target(of:)``).
    public struct Target: Sendable, Equatable {
        /// The file to read and replace: the path given, or the end of its chain of links.
        public var path: String
        /// The path given, when it is a symbolic link (`nil` when it is not).
        public var link: String?

        /// Whether the file was there when the link rule was applied (so was its directory).
        package var existed = false

        /// Whether the file was reached through a symbolic link.
        public var isThroughLink: Bool { link != nil }

        /// Whether both name the same file reached the same way (not whether it existed).
        public static func == (lhs: Target, rhs: Target) -> Bool {
            lhs.path == rhs.path && lhs.link == rhs.link
        }

        /// The failure for a file reached through a link that is not a property list (it does
        /// not parse, or its root is not a dictionary): such a file is never moved aside,
        /// quarantined or replaced, since the link may have been planted to make a privileged
        /// process overwrite it.
        ///
        /// - Parameter problem: why it is not a property list.
        /// - Returns: a failure (`EINVAL`) naming the link and the problem.
        public func notAPropertyList(_ problem: String) -> Failure {
            Failure("\(path) is reached through the symbolic link \(link ?? path) and is not a property list (\(problem)); it is never moved aside or replaced", code: EINVAL)
        }
    }

    /// Applies the link rule to `path`: where a settings file reached through `path` is read
    /// and saved.
    ///
    /// Saving through links is wanted (a dotfile manager links `~/.config/App/settings.plist`
    /// into a repository), but must not become a way to overwrite files the user never meant as
    /// settings. So, as Linux's `protected_symlinks` does for sticky directories, a link is
    /// followed only when **the link itself belongs to the process's effective user**; a link
    /// belonging to anyone else is refused (a root process never follows a user's link). The
    /// end of the chain must be a regular file, or not exist yet in an existing directory that
    /// belongs to the effective user. Links in the middle of `path` (directory links) are under
    /// the same rule: the user's own is followed and makes the file one reached through a link,
    /// another user's is refused, and root's (the system's layout) is followed by everyone.
    /// Callers add the last part of the rule: a file reached
    /// through a link that does not parse as a property list is reported
    /// (``Target/notAPropertyList(_:)``) and never moved aside or replaced.
    ///
    /// ```swift
    /// let target = try PlistFile.target(of: "/home/ada/.config/App/settings.plist")
    /// // target.path: "/home/ada/dotfiles/app.plist"; target.link: the path given
    /// ```
    ///
    /// - Parameter path: the file as named (a link or not).
    /// - Returns: the file to use, and the link when there is one.
    /// - Throws: ``Failure`` (`EPERM`) naming the link that is not followed and why, or
    ///   (`ELOOP`) for a loop of links.
    public static func target(of path: String) throws(Failure) -> Target {
        var current = path
        var throughLink = false
        for _ in 0..<32 {
            // A link in the middle of the path (a directory link) is under the same rule.
            if let (prefix, rest) = try linkedDirectory(in: current, followedFrom: path) {
                current = prefix + rest
                throughLink = true
                continue
            }
            var s = stat()
            guard lstat(current, &s) == 0 else {
                guard errno == ENOENT, throughLink else { return Target(path: current, link: throughLink ? path : nil) }
                // A dangling link: its target may be created only in a directory of the user's.
                let directory = directory(of: current)
                guard let owner = ownerOfDirectory(directory), owner == geteuid() else {
                    throw Failure("the symbolic link \(path) leads to \(current), which does not exist, in \(directory), which does not belong to this process's user; it is not followed", code: EPERM)
                }
                return Target(path: current, link: path)
            }
            guard (s.st_mode & S_IFMT) == S_IFLNK else {
                if throughLink, (s.st_mode & S_IFMT) != S_IFREG {
                    throw Failure("the symbolic link \(path) leads to \(current), which is \(kind(UInt32(s.st_mode))), not a regular file; it is not followed", code: EPERM)
                }
                return Target(path: current, link: throughLink ? path : nil, existed: true)
            }
            guard s.st_uid == geteuid() else {
                throw Failure("\(current) is a symbolic link owned by user \(s.st_uid), not by this process's user (\(geteuid())); it is not followed, and nothing it leads to is read or written", code: EPERM)
            }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { throw Failure("cannot read the symbolic link \(current)") }
            let destination = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = destination.hasPrefix("/") ? destination : directory(of: current) + "/" + destination
            throughLink = true
        }
        throw Failure("\(path) is a chain of more than 32 symbolic links", code: ELOOP)
    }

    /// The first symbolic link among the directories of `path`, when there is one: the path
    /// with that link replaced by what it leads to, split as (the link's destination, the rest
    /// of the path). A link of the effective user's is followed (and makes the file one reached
    /// through a link); a link of root's is part of the system's layout (`/var/run`) and is
    /// followed like a directory; any other user's link is refused.
    ///
    /// - Parameters:
    ///   - path: the path, as resolved so far.
    ///   - original: the path given, for messages.
    /// - Returns: `nil` when no directory of `path` is a link that makes a difference.
    /// - Throws: ``Failure`` (`EPERM`) for another user's link.
    private static func linkedDirectory(in path: String, followedFrom original: String) throws(Failure) -> (String, String)? {
        for slash in path.utf8.indices where path.utf8[slash] == UInt8(ascii: "/") && slash != path.startIndex {
            let prefix = String(path[..<slash])
            var s = stat()
            guard lstat(prefix, &s) == 0 else { return nil }  // missing: nothing further is a link
            guard (s.st_mode & S_IFMT) == S_IFLNK else { continue }
            guard s.st_uid == geteuid() || s.st_uid == 0 else {
                throw Failure("\(prefix), on the path of \(original), is a symbolic link owned by user \(s.st_uid), not by this process's user (\(geteuid())) or root; it is not followed, and nothing it leads to is read or written", code: EPERM)
            }
            if s.st_uid == 0, geteuid() != 0 { continue }  // the system's own layout
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(prefix, &buffer, buffer.count - 1)
            guard n > 0 else { throw Failure("cannot read the symbolic link \(prefix)") }
            let destination = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let resolved = destination.hasPrefix("/") ? destination : directory(of: prefix) + "/" + destination
            return (resolved, String(path[slash...]))
        }
        return nil
    }

    /// The owner of `directory` (following links), or `nil` when it is not a directory.
    static func ownerOfDirectory(_ directory: String) -> uid_t? {
        var s = stat()
        guard stat(directory, &s) == 0, (s.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return s.st_uid
    }

    /// Whether `directory` is a directory that belongs to the process's effective user: the
    /// only place a lock file is ever created (see ``tryLock(_:)``).
    ///
    /// - Parameter directory: the directory.
    /// - Returns: `true` when it exists, is a directory, and is the effective user's.
    package static func belongsToUser(directory: String) -> Bool {
        ownerOfDirectory(directory) == geteuid()
    }
}
