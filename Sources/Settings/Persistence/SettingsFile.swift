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
import SettingsPlist
import Synchronization

/// The user's settings file: reading it, merging this process's changes into whatever it holds
/// now, and replacing it durably and atomically under an advisory lock.
///
/// All file work happens under one `Mutex`, so saves and reloads of one store never interleave;
/// the advisory lock (`.NAME.lock` beside the file) does the same between processes.
final class SettingsFile: Sendable {
    struct State {
        /// The format to write: the existing file's, else the store's.
        var format: PlistFormat
        /// The identity and contents of the file as this process last read or wrote it.
        var known: POSIXFile.Identity?
        var contents = PlistDictionary()
        /// Set when the file exists but could not be read (permissions, not a file): then
        /// nothing on disk is ever touched.
        var unreadable: SettingsError?
        /// The problem found when the file was last loaded, if any.
        var loadError: SettingsError?
        /// Where a corrupt file was moved, if it was.
        var movedAside: URL?
        /// The identity of a malformed file already reported (so it is reported once).
        var reportedMalformed: POSIXFile.Identity?
        var writes = 0
        var reloads = 0
        /// Whether temporary files left by crashed writers were removed (once per process).
        var sweptLeftovers = false
    }

    let url: URL
    let path: String
    let lockPath: String
    let state: Mutex<State>

    init(url: URL, format: PlistFormat) {
        self.url = url
        path = url.path
        let parts = PathParts(path)
        lockPath = parts.directory + "/." + parts.name + ".lock"
        state = Mutex(State(format: format))
    }

    // MARK: Loading

    /// Reads the file when the store is created. A missing file is an empty store; a file that
    /// cannot be read is reported and never touched; a file that cannot be parsed is moved
    /// aside (under the lock, if it is still the same file) and reported.
    func load() -> PlistDictionary {
        state.locked { s in
            let read: (data: Data, identity: POSIXFile.Identity)?
            do {
                read = try POSIXFile.read(path)
            } catch {
                let problem = SettingsError(.invalidFile, path: path, detail: "\(error); using defaults, and the file will not be written")
                s.unreadable = problem
                s.loadError = problem
                SettingsDiagnostics.report(SettingsDiagnostic(.fileError, problem.description))
                return PlistDictionary()
            }
            guard let read else { return PlistDictionary() }
            switch parse(read.data) {
            case .success(let (dictionary, format)):
                s.known = read.identity
                s.contents = dictionary
                s.format = format
                return dictionary
            case .failure(let problem):
                moveAsideIfUnchanged(read.identity, problem, &s)
                return PlistDictionary()
            }
        }
    }

    /// Parses file contents: a dictionary and its format, or an error naming the file and the
    /// line and column (XML) or byte offset (binary).
    func parse(_ data: Data) -> Result<(PlistDictionary, PlistFormat), SettingsError> {
        do {
            let value = try PlistValue(decoding: data)
            guard case .dictionary(let dictionary) = value else {
                return .failure(SettingsError(.invalidFile, path: path, detail: "the root is \(value.typeNameWithArticle), expected a dict"))
            }
            return .success((dictionary, PlistFormat.detect(data)))
        } catch {
            return .failure(SettingsError(.invalidFile, path: path, underlying: error.inFile(path)))
        }
    }

    /// Moves a malformed file to `NAME.corrupt-<UTC timestamp>` beside it, unless another
    /// process replaced it meanwhile, and reports what happened.
    /// - Parameter lockHeld: whether the caller holds the advisory lock already (`flock` locks
    ///   belong to an open file, so taking it twice in one process would wait forever).
    private func moveAsideIfUnchanged(_ identity: POSIXFile.Identity, _ problem: SettingsError, _ s: inout State, lockHeld: Bool = false) {
        var problem = problem
        do {
            let lock = lockHeld ? nil : try POSIXFile.lock(lockPath)
            defer { if let lock { POSIXFile.unlock(lock) } }
            guard try POSIXFile.identity(of: path) == identity else { return }
            let destination = path + ".corrupt-" + Self.timestamp()
            try POSIXFile.moveAside(path, to: destination)
            s.movedAside = URL(filePath: destination)
            problem.append(detail: "moved aside to \(destination); using defaults")
        } catch {
            problem.append(detail: "could not move it aside (\(error)); using defaults, and the file will not be written")
            s.unreadable = problem
        }
        s.loadError = problem
        SettingsDiagnostics.report(SettingsDiagnostic(.fileError, problem.description))
    }

    /// `20261123T101502.123Z`: sortable, unique to the millisecond, safe in file names.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = time_t(now.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = Int(now.tv_nsec) / 1_000_000
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec)).\(ms)Z"
    }

    // MARK: Saving

    /// Writes this process's changes into the file: under the lock, the file's current contents
    /// are read (when another process changed it), the changed key paths are set to their values
    /// in this process (or removed), and the result replaces the file durably. A malformed file
    /// found on disk is moved aside, never overwritten, and this process's values are written.
    ///
    /// - Parameters:
    ///   - snapshot: takes the store's user layer and the key paths changed since the last save
    ///     (called under this file's lock, so saves never overtake each other).
    ///   - restore: gives the changed key paths back when the save fails.
    ///   - reconcile: brings the store up to date with the file's new contents (still under the lock).
    /// - Returns: what `reconcile` returned, or `nil` when there was nothing to save.
    func save<R>(
        snapshot: () -> (values: PlistDictionary, changed: [SettingsKey]),
        restore: ([SettingsKey]) -> Void,
        reconcile: (PlistDictionary) -> R
    ) throws(SettingsError) -> R? {
        try state.locked { s throws(SettingsError) -> R? in
            if let unreadable = s.unreadable { throw unreadable }
            let (values, changed) = snapshot()
            guard !changed.isEmpty else { return nil }
            do throws(SettingsError) {
                let merged = try write(values, changed: changed, &s)
                return reconcile(merged)
            } catch {
                restore(changed)
                throw error
            }
        }
    }

    private func write(_ values: PlistDictionary, changed: [SettingsKey], _ s: inout State) throws(SettingsError) -> PlistDictionary {
        do {
            try createDirectory()
            let lock = try POSIXFile.lock(lockPath)
            defer { POSIXFile.unlock(lock) }
            if !s.sweptLeftovers {
                // Temporary files exist only while a writer holds the lock: any seen now were
                // left by a writer that was killed mid-save.
                s.sweptLeftovers = true
                removeLeftoverTemporaryFiles()
            }
            var base = PlistDictionary()  // a file removed by someone else: only our changes go back
            var permissions: mode_t = 0o600
            if let current = try POSIXFile.identity(of: path) {
                permissions = current.permissions
                if current == s.known {
                    base = s.contents
                } else if let read = try POSIXFile.read(path) {
                    switch parse(read.data) {
                    case .success(let (dictionary, format)):
                        base = dictionary
                        s.format = format
                    case .failure(let problem):
                        moveAsideIfUnchanged(read.identity, problem, &s, lockHeld: true)
                        if let unreadable = s.unreadable { throw unreadable }
                        base = values
                    }
                }
            }
            var merged = base
            for key in changed {
                _ = merged.setValue(values.value(at: key.components), at: key.components[...])
            }
            let bytes = try PlistValue.dictionary(merged).encoded(as: s.format)
            s.known = try POSIXFile.replace(path, with: bytes, permissions: permissions)
            s.contents = merged
            s.writes += 1
            return merged
        } catch let error as POSIXFile.Failure {
            throw SettingsError(.invalidFile, path: path, detail: "not saved: \(error)")
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: "not saved: \(error)")
        }
    }

    /// Removes `.NAME.tmp-*` files beside the file (call with the lock held).
    private func removeLeftoverTemporaryFiles() {
        let parts = PathParts(path)
        let prefix = "." + parts.name + ".tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parts.directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            unlink(parts.directory + "/" + name)
        }
    }

    /// Creates the file's directory (owner-only) when it is missing.
    private func createDirectory() throws(SettingsError) {
        let directory = url.deletingLastPathComponent()
        guard !FileManager.default.fileExists(atPath: directory.path) else { return }
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: "cannot create its directory: \(PlistError.reason(error))")
        }
    }

    // MARK: External changes

    /// The file's contents when it changed since this process last read or wrote it, or `nil`
    /// when it did not (a process's own writes are recognised by identity and not reloaded).
    /// A file that is missing reads as empty; one that does not parse is reported once and
    /// ignored until it changes again (it is moved aside at the next save).
    func reloadIfChanged<R>(reconcile: (PlistDictionary) -> R) -> R? {
        state.locked { s -> R? in
            guard s.unreadable == nil else { return nil }
            do {
                let current = try POSIXFile.identity(of: path)
                if current == s.known { return nil }
                guard let read = try POSIXFile.read(path) else {
                    s.known = nil
                    guard !s.contents.isEmpty else { return nil }
                    s.contents = PlistDictionary()
                    s.reloads += 1
                    return reconcile(s.contents)
                }
                switch parse(read.data) {
                case .success(let (dictionary, format)):
                    s.known = read.identity
                    s.format = format
                    s.reloads += 1
                    let changed = dictionary != s.contents
                    s.contents = dictionary
                    return changed ? reconcile(dictionary) : nil
                case .failure(let problem):
                    if s.reportedMalformed != read.identity {
                        s.reportedMalformed = read.identity
                        var problem = problem
                        problem.append(detail: "changed on disk but cannot be read; keeping the values in memory")
                        SettingsDiagnostics.report(SettingsDiagnostic(.fileError, problem.description))
                    }
                    return nil
                }
            } catch {
                return nil  // it vanished or became unreadable mid-check: look again next time
            }
        }
    }
}

extension SettingsError {
    /// Adds words to ``detail``, after any already there.
    mutating func append(detail more: String) {
        detail = detail.map { "\($0); \(more)" } ?? more
    }
}
