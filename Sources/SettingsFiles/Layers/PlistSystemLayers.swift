public import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The administrator's files for one domain: system-wide defaults
/// (`<dir>/<app>/settings.plist`) and locked keys (`<dir>/<app>/locked.plist`) from each system
/// directory, as ``load(application:from:environment:limit:)`` finds them.
///
/// Only files an administrator controls count (see ``trustRefusal(of:)``); any other is
/// ignored and named in ``problems``. Locks are policy, not a sandbox: a user who controls their
/// own environment can point `$XDG_CONFIG_DIRS` elsewhere, which is why ``SystemDirectories``
/// reads locks from pinned directories whatever the environment says.
///
/// ```swift
/// let system = PlistSystemLayers.load(application: "App", from: .environment)
/// system.defaults            // merged, earlier directories winning
/// system.lockingFile(of: ["Network", "proxy"])   // "/etc/xdg/App/locked.plist" or nil
/// ```
public struct PlistSystemLayers: Hashable, Sendable {
    /// One administrator's file that counts.
    public struct File: Hashable, Sendable {
        /// The path it was found at (in a system directory; may be a link).
        public var path: String
        /// Its dictionary.
        public var values: PlistDictionary
    }

    /// System defaults files, most important first.
    public var defaultsFiles: [File] = []
    /// Locks files, most important first.
    public var lockFiles: [File] = []
    /// One line per file that exists but does not count, naming it and why (not the
    /// administrator's, open to others, not a property list…).
    public var problems: [String] = []
    /// Locks files that the administrator owns but that could not be read or parsed (being
    /// rewritten in place, say): see ``keepingLocks(from:)``.
    public var unreadableLockFiles: [String] = []
    /// The locks files looked for, most important first.
    var lockPaths: [String] = []

    /// These files, with the locks of `previous` kept for each locks file that could not be
    /// read now: a program that read a lock goes on honouring it while the file is broken (a
    /// diagnostic names the file), rather than unlocking the key until it is mended.
    ///
    /// - Parameter previous: the files as last read.
    public func keepingLocks(from previous: PlistSystemLayers) -> PlistSystemLayers {
        var copy = self
        for path in unreadableLockFiles {
            if let kept = previous.lockFiles.first(where: { $0.path == path }) { copy.lockFiles.append(kept) }
        }
        let order = lockPaths
        copy.lockFiles.sort { (order.firstIndex(of: $0.path) ?? .max) < (order.firstIndex(of: $1.path) ?? .max) }
        return copy
    }

    /// No files.
    public init() {}

    /// The system defaults, merged: an earlier directory's value wins.
    public var defaults: PlistDictionary { Self.merge(defaultsFiles) }
    /// The locked values, merged: an earlier directory's value wins.
    public var locks: PlistDictionary { Self.merge(lockFiles) }

    private static func merge(_ files: [File]) -> PlistDictionary {
        files.reversed().reduce(PlistDictionary()) { lower, file in file.values.merged(over: lower) }
    }

    /// The locks file that locks `key`, or `nil` when no lock touches it. A key is locked when
    /// a locked leaf is the key itself, lies under it (a namespace holding a locked key cannot be
    /// replaced as a whole), or lies above it (nothing can be written inside a locked value).
    ///
    /// - Parameter key: the key path's components.
    public func lockingFile(of key: [String]) -> String? {
        lockFiles.first { PlistLocks.locks(key, in: $0.values) }?.path
    }

    /// The explanation's rows for `key` (see ``SettingsExplanation``): with `locks`, one per locks
    /// file that has the key, layer `locked`, noted "locked by FILE" (none when no file does:
    /// a lock is shown only where there is one); otherwise one per system defaults file, layer
    /// `system` (a single "none installed" row when there are none).
    ///
    /// - Parameters:
    ///   - key: the key path's components.
    ///   - locks: whether to list the locks files (else the defaults files).
    public func rows(for key: [String], locks: Bool) -> [SettingsExplanation.Row] {
        if locks {
            return lockFiles.compactMap { file in
                guard let value = file.values.value(at: key) else { return nil }
                return SettingsExplanation.Row(layer: "locked", source: file.path, value: value, notes: ["locked by \(file.path)"])
            }
        }
        guard !defaultsFiles.isEmpty else { return [] }
        return defaultsFiles.map { file in
            SettingsExplanation.Row(layer: "system", source: file.path, value: file.values.value(at: key))
        }
    }

    /// Where system files are read from.
    public enum SystemDirectories: Hashable, Sendable {
        /// `$XDG_CONFIG_DIRS` (default `/etc/xdg`) for defaults and locks; locks are read from
        /// ``SettingsLocations/defaultSystemDirectory`` (`/etc/xdg`) first in any case, so a user
        /// who changes the variable does not escape them.
        case environment
        /// Exactly these directories, most important first, whatever the environment says: a
        /// deployer's pin.
        case fixed([String])
        /// None: no system defaults, no locks.
        case none

        /// The directories for defaults and those for locks, most important first.
        public func resolved(environment: (String) -> String?) -> (defaults: [String], locks: [String]) {
            switch self {
            case .environment:
                let listed = SettingsLocations.systemDirectories(environment: environment)
                let pinned = SettingsLocations.defaultSystemDirectory
                return (listed, [pinned] + listed.filter { $0 != pinned })
            case .fixed(let directories):
                let trimmed = directories.filter { $0.hasPrefix("/") }.map(SettingsLocations.trimmed)
                return (trimmed, trimmed)
            case .none:
                return ([], [])
            }
        }
    }

    /// Reads the administrator's files of `application`.
    ///
    /// - Parameters:
    ///   - application: the domain name (a single path component).
    ///   - directories: where to look.
    ///   - environment: looks up an environment variable (the process's by default).
    ///   - limit: the largest file read.
    /// - Returns: the files that count, and a line for each one that does not.
    public static func load(
        application: String, from directories: SystemDirectories,
        environment: (String) -> String? = SettingsLocations.processEnvironment, limit: Int = PlistFile.maximumSize
    ) -> PlistSystemLayers {
        var result = PlistSystemLayers()
        guard !application.isEmpty, !application.contains("/"), application != ".", application != ".." else { return result }
        let (defaultsDirectories, lockDirectories) = directories.resolved(environment: environment)
        for directory in defaultsDirectories {
            result.read(directory + "/" + application + "/" + SettingsLocations.settingsFileName, into: \.defaultsFiles, limit: limit)
        }
        for directory in lockDirectories {
            result.lockPaths.append(directory + "/" + application + "/" + SettingsLocations.lockedFileName)
            result.read(directory + "/" + application + "/" + SettingsLocations.lockedFileName, into: \.lockFiles, limit: limit)
        }
        return result
    }

    /// Every path ``load(application:from:environment:limit:)`` looks at, for watching:
    /// each system directory's application directory.
    public static func applicationDirectories(
        application: String, from directories: SystemDirectories,
        environment: (String) -> String? = SettingsLocations.processEnvironment
    ) -> [String] {
        let (defaults, locks) = directories.resolved(environment: environment)
        var seen: [String] = []
        for directory in defaults + locks where !seen.contains(directory + "/" + application) {
            seen.append(directory + "/" + application)
        }
        return seen
    }

    private mutating func read(_ path: String, into list: WritableKeyPath<PlistSystemLayers, [File]>, limit: Int) {
        var s = stat()
        guard lstat(path, &s) == 0 else { return }  // no file: nothing to say
        if let refusal = Self.trustRefusal(of: path) {
            problems.append("\(path): ignored, not the administrator's file: \(refusal)")
            return
        }
        do {
            let target = try PlistFile.target(of: path).path
            guard let contents = try PlistFile.read(target, limit: limit, followingLinks: false) else { return }
            let value = try PlistValue(decoding: contents.bytes)
            guard case .dictionary(let dictionary) = value else {
                unreadable(path, list: list, "\(path): ignored: its root is not a dictionary")
                return
            }
            self[keyPath: list].append(File(path: path, values: dictionary))
        } catch let error as PlistFile.Failure {
            unreadable(path, list: list, "\(path): ignored: \(error.operation)")
        } catch let error as PlistError {
            unreadable(path, list: list, "\(error.inFile(path)); ignored")
        } catch {
            unreadable(path, list: list, "\(path): ignored: \(error)")
        }
    }

    private mutating func unreadable(_ path: String, list: WritableKeyPath<PlistSystemLayers, [File]>, _ problem: String) {
        problems.append(problem)
        if list == \.lockFiles { unreadableLockFiles.append(path) }
    }

    /// Why the file at `path` must not count as the administrator's, or `nil` when it may.
    ///
    /// It counts when it is reached under the link rule (``PlistFile/target(of:)``), is a
    /// regular file, and it and every directory above it (those of the path as named and of the
    /// file it leads to) belong to root or to the process's effective user and are writable by
    /// no one else. A sticky directory writable by others (`/tmp`) is allowed: others cannot
    /// replace what they do not own in it.
    ///
    /// - Parameter path: an absolute path.
    public static func trustRefusal(of path: String) -> String? {
        let target: String
        do {
            target = try PlistFile.target(of: path).path
        } catch {
            return error.operation
        }
        var s = stat()
        guard lstat(target, &s) == 0 else { return "it cannot be examined (\(PlistFile.reason(errno)))" }
        guard (s.st_mode & S_IFMT) == S_IFREG else { return "it is \(PlistFile.kind(UInt32(s.st_mode))), not a regular file" }
        if let refusal = ownership(s, of: target, isDirectory: false) { return refusal }
        for chain in [path, realPath(target) ?? target] {
            if let refusal = directoriesRefusal(above: chain) { return refusal }
        }
        return nil
    }

    /// The first directory above `path` (or link on the way) that someone else controls.
    private static func directoriesRefusal(above path: String) -> String? {
        var directory = PlistFile.directory(of: path)
        while true {
            var s = stat()
            guard lstat(directory, &s) == 0 else { return "\(directory) cannot be examined (\(PlistFile.reason(errno)))" }
            let isLink = (s.st_mode & S_IFMT) == S_IFLNK
            if let refusal = ownership(s, of: directory, isDirectory: !isLink) { return refusal }
            if isLink, let resolved = realPath(directory), resolved != directory,
               let refusal = directoriesRefusal(aboveIncluding: resolved) {
                return refusal
            }
            if directory == "/" { return nil }
            directory = PlistFile.directory(of: directory)
        }
    }

    /// ``directoriesRefusal(above:)`` for a directory and those above it (a link's target),
    /// without links on the way (`realpath` resolved them all).
    private static func directoriesRefusal(aboveIncluding directory: String) -> String? {
        var current = directory
        while true {
            var s = stat()
            guard lstat(current, &s) == 0 else { return "\(current) cannot be examined (\(PlistFile.reason(errno)))" }
            if let refusal = ownership(s, of: current, isDirectory: true) { return refusal }
            if current == "/" { return nil }
            current = PlistFile.directory(of: current)
        }
    }

    /// Why an entry with status `s` is not the administrator's: another owner, or open to writes
    /// by others (a sticky directory excepted; a link's own mode means nothing).
    private static func ownership(_ s: stat, of path: String, isDirectory: Bool) -> String? {
        let euid = geteuid()
        guard s.st_uid == 0 || s.st_uid == euid else {
            return "\(path) belongs to user \(s.st_uid), not to root or to this process's user (\(euid))"
        }
        guard (s.st_mode & S_IFMT) != S_IFLNK else { return nil }
        let openToOthers = s.st_mode & (S_IWGRP | S_IWOTH) != 0
        if openToOthers && !(isDirectory && s.st_mode & S_ISVTX != 0) {
            let who = s.st_mode & S_IWOTH != 0 ? "everyone" : "its group"
            return "\(path) is writable by \(who) (mode \(String(s.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
