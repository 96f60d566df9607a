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
import SettingsFiles

/// The user's settings file: reading it, merging this process's changes into whatever it holds
/// now, and replacing it durably and atomically under an advisory lock.
///
/// A value owned by its ``SettingsStore`` and used only on the store's executor, so it needs no
/// lock of its own: nothing here is ever waited for by a reader or writer of settings. Problems
/// are collected in ``diagnostics`` and delivered by the store once every lock is released.
struct SettingsFile {
    let url: URL
    /// The path as given (it may be a symbolic link: saves go through to its target).
    let path: String
    let options: PersistenceOptions
    /// The format to write: the existing file's, else the store's.
    var format: PlistFormat
    /// The identity and contents of the file as this process last read or wrote it.
    var known: PlistFile.Identity?
    var contents = PlistDictionary()
    /// The problem found when the file was last loaded, if any.
    var loadError: SettingsError?
    /// Where a corrupt file was moved, if it was.
    var movedAside: URL?
    /// The identity of a malformed or unusable file already reported (so it is reported once).
    var reported: PlistFile.Identity?
    /// A malformed file seen at a save, and when: it is moved aside only if it is still the same
    /// and still malformed after ``PersistenceOptions/settleDelay`` (an editor may be halfway
    /// through rewriting it in place).
    var suspect: Suspect?

    /// A malformed file seen at a save, and since when: moved aside only if still malformed
    /// after the settle delay.
    struct Suspect {
        var identity: PlistFile.Identity
        var since: ContinuousClock.Instant
    }
    /// This store's place in the queue for the lock while another process holds it (see
    /// ``LockWaiter``); dropping it gives the place up.
    var lockWaiter: LockWaiter?
    /// Called (on the waiter's thread) when a ``LockWaiter`` got the lock: asks the store for a
    /// save attempt now.
    var onLockAcquired: @Sendable () -> Void = {}
    /// Whether temporary files left by crashed writers were removed (once per process).
    var sweptLeftovers = false
    /// Whether falling back to binary because XML cannot carry a value was reported.
    var reportedBinaryFallback = false
    var writes = 0
    var reloads = 0
    /// Problems to report once no lock is held.
    var diagnostics: [SettingsDiagnostic] = []
    /// Where provenance is published for the store to read (see SettingsFile+History.swift).
    var history: StoreHistory?
    /// The file's provenance log and generations, as this process last saw them.
    var historyState = HistoryState()

    init(url: URL, format: PlistFormat, options: PersistenceOptions) {
        self.url = url
        self.path = url.path
        self.format = format
        self.options = options
    }

    /// Where the file really is, by the link rule (``PlistFile/target(of:)``: only the user's
    /// own links are followed), and its lock beside it.
    func resolved() throws(SettingsError) -> (file: PlistFile.Target, lock: String) {
        do {
            let target = try PlistFile.target(of: path)
            return (target, PlistFile.lockPath(for: target.path))
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: error.description)
        }
    }

    /// The path of ``resolved()`` for watching: the path as given when the link rule refuses it.
    var targetPath: String {
        (try? resolved().file.path) ?? path
    }

    // MARK: Reading

    /// What reading the file found.
    enum Read {
        case missing
        case parsed(PlistDictionary, PlistFormat, PlistFile.Identity)
        case malformed(SettingsError, PlistFile.Identity)
        /// It exists but cannot be used: permission denied, not a regular file, too large.
        case unusable(SettingsError)
    }

    /// Reads and parses the file (bounded: never blocks on a FIFO, never allocates past the size
    /// limit). A file reached through a link that is not a property list is unusable, never
    /// malformed: it is never moved aside or replaced.
    func read(_ target: PlistFile.Target) -> Read {
        let read: PlistFile.Contents?
        do {
            read = try PlistFile.read(target.path, limit: options.maximumFileSize, followingLinks: false)
        } catch {
            return .unusable(SettingsError(.invalidFile, path: target.path, detail: error.description))
        }
        guard let read else { return .missing }
        switch parse(read.bytes, at: target.path) {
        case .success(let (dictionary, format)): return .parsed(dictionary, format, read.identity)
        case .failure(let problem) where target.isThroughLink:
            let reason = problem.underlying.map { "\($0)" } ?? problem.detail ?? "it does not parse"
            return .unusable(SettingsError(.invalidFile, path: target.path, detail: target.notAPropertyList(reason).operation))
        case .failure(let problem): return .malformed(problem, read.identity)
        }
    }

    /// Parses file contents: a dictionary and its format, or an error naming the file and the
    /// line and column (XML) or byte offset (binary).
    func parse(_ bytes: [UInt8], at target: String) -> Result<(PlistDictionary, PlistFormat), SettingsError> {
        Self.parse(bytes, at: target)
    }

    /// Parses file contents (see the instance method); model files use it too.
    static func parse(_ bytes: [UInt8], at target: String) -> Result<(PlistDictionary, PlistFormat), SettingsError> {
        do {
            let value = try PlistValue(decoding: bytes)
            guard case .dictionary(let dictionary) = value else {
                return .failure(SettingsError(.invalidFile, path: target, detail: "the root is \(value.typeNameWithArticle), expected a dictionary"))
            }
            return .success((dictionary, PlistFormat.detect(bytes)))
        } catch {
            return .failure(SettingsError(.invalidFile, path: target, underlying: error.inFile(target)))
        }
    }

    /// Reads the file at the store's first use. A missing file is an empty store; a file that
    /// cannot be used or parsed is reported, kept in ``loadError``, and left exactly as it is
    /// (a malformed one is moved aside only when a save would replace it, see ``save``).
    mutating func load() -> PlistDictionary {
        let target: PlistFile.Target
        do {
            target = try resolved().file
        } catch {
            var problem = error
            problem.append(detail: "using defaults, and the file will not be written")
            loadError = problem
            diagnostics.append(SettingsDiagnostic(.fileError, problem.description))
            return PlistDictionary()
        }
        switch read(target) {
        case .missing:
            return PlistDictionary()
        case .parsed(let dictionary, let format, let identity):
            known = identity
            contents = dictionary
            self.format = format
            noteLoad(target: target.path, fileDate: identity.modificationDate)
            return dictionary
        case .malformed(var problem, let identity):
            problem.append(detail: "using defaults; the file is left as it is until a save would replace it")
            loadError = problem
            reported = identity
            diagnostics.append(SettingsDiagnostic(.fileError, problem.description))
            return PlistDictionary()
        case .unusable(var problem):
            problem.append(detail: "using defaults, and the file will not be written")
            loadError = problem
            diagnostics.append(SettingsDiagnostic(.fileError, problem.description))
            return PlistDictionary()
        }
    }

    // MARK: Saving

    /// What one save writes, taken from the store under the file lock (so saves never overtake
    /// each other) and given back when the save fails.
    struct SaveBatch {
        /// The store's user layer.
        var values: PlistDictionary
        /// The key paths changed since the last save.
        var changed: [SettingsKey]
        /// Old names a rename removed, with the value moved: removed from the file only while
        /// it still holds that value (a value another program wrote there since is kept).
        var removedIfUnchanged: [SettingsKey: PlistValue] = [:]
        /// Origins other than this process's own write, per key path (sync, migration, restore).
        var notes: [[String]: PlistProvenance] = [:]
    }

    /// What one attempt to save did.
    enum SaveStep<R: ~Copyable>: ~Copyable {
        /// Nothing was changed since the last save.
        case nothing
        /// Another process holds the lock (at this path): try again later.
        case busy(lock: String)
        /// The file on disk is malformed; it is looked at again after this long before it is
        /// moved aside.
        case settling(Duration)
        /// Saved; what `reconcile` returned.
        case saved(R)
    }

    /// Tries once to write this process's changes into the file: under the lock (taken without
    /// waiting), the file's current contents are read when another process changed it, the
    /// changed key paths are set to their values in this process (or removed), and the result
    /// replaces the file durably. A malformed file on disk is moved aside once it has stayed
    /// malformed for the settle delay, never overwritten; one that cannot be read is never
    /// touched (the save throws, and the next attempt looks again).
    ///
    /// - Parameters:
    ///   - snapshot: takes the store's user layer and the key paths changed since the last save
    ///     (called with the file lock held, so saves never overtake each other).
    ///   - restore: gives the batch back when the save fails.
    ///   - reconcile: brings the store up to date with the file's new contents.
    mutating func save<R: ~Copyable>(
        hasChanges: Bool,
        snapshot: () -> SaveBatch,
        restore: (SaveBatch) -> Void,
        reconcile: (PlistDictionary) -> R
    ) throws(SettingsError) -> SaveStep<R> {
        guard hasChanges else {
            lockWaiter = nil  // a place in the lock's queue is not needed any more
            return .nothing
        }
        let (file, lockPath) = try resolved()
        let target = file.path
        if file.isThroughLink, known == nil || (try? PlistFile.identity(of: target)) != known,
           case .unusable(var problem) = read(file) {
            // Nothing is created beside a file a link leads to (not even the lock) before it is
            // known to be a property list.
            problem.append(detail: "not saved; the changes are kept in memory")
            throw problem
        }
        try Self.createDirectory(of: target)
        let lock: PlistFile.Lock
        if let held = lockWaiter?.take() {
            lock = held
            lockWaiter = nil
        } else {
            do {
                guard let taken = try PlistFile.tryLock(lockPath) else {
                    if lockWaiter == nil || lockWaiter?.hasFailed == true {
                        lockWaiter = LockWaiter(path: lockPath, onAcquired: onLockAcquired)
                    }
                    return .busy(lock: lockPath)
                }
                lock = taken
                lockWaiter = nil
            } catch {
                throw SettingsError(.invalidFile, path: target, detail: "not saved: \(error)")
            }
        }
        defer { lock.release() }
        if !sweptLeftovers {
            // Temporary files exist only while a writer holds the lock: any seen now were left
            // by a writer that was killed mid-save.
            sweptLeftovers = true
            PlistFile.removeLeftoverTemporaryFiles(beside: target)
            // So are the provenance log's (written under the same lock), in a companion
            // directory that passes its checks (never through a link).
            if (try? PlistFile.existingCompanionDirectory(for: target)) != nil {
                PlistFile.removeLeftoverTemporaryFiles(beside: PlistProvenanceLog.path(for: target))
            }
        }
        var base: PlistDictionary? = PlistDictionary()  // a file removed meanwhile: only our changes go back
        var reread = false  // whether another writer changed the file since this process read or wrote it
        var permissions: UInt32 = 0o600
        var owner: PlistFile.Owner?
        let current: PlistFile.Identity?
        do {
            current = try PlistFile.identity(of: target)
        } catch {
            throw SettingsError(.invalidFile, path: target, detail: "not saved: \(error)")
        }
        if let current {
            permissions = current.permissions
            owner = current.owner
            if current == known {
                base = contents
            } else {
                switch read(file) {
                case .missing:
                    break
                case .parsed(let dictionary, let format, _):
                    base = dictionary
                    reread = true
                    self.format = format
                    suspect = nil
                case .unusable(var problem):
                    problem.append(detail: "not saved; the changes are kept in memory")
                    throw problem
                case .malformed(let problem, let identity):
                    let now = ContinuousClock.now
                    guard let seen = suspect, seen.identity == identity else {
                        suspect = Suspect(identity: identity, since: now)
                        return .settling(options.settleDelay)
                    }
                    let waited = now - seen.since
                    if waited < options.settleDelay { return .settling(options.settleDelay - waited) }
                    try quarantine(target, identity, problem)
                    suspect = nil
                    base = nil  // write the whole user layer: it is all this process has
                }
            }
        }
        var batch = snapshot()
        batch.notes = history?.takeNotes() ?? [:]
        guard !batch.changed.isEmpty else {
            restore(batch)  // the notes wait for the save that writes their keys
            return .nothing
        }
        var kept: Int?  // the generation kept for this save
        do throws(SettingsError) {
            let merged = Self.merge(batch, into: base)
            let bytes = try encode(merged, for: target)
            try Self.checkSize(bytes, limit: options.maximumFileSize, for: target)
            // History and provenance (SettingsFile+History.swift): kept before the file is replaced.
            kept = prepareSave(bytes: bytes, base: base, reread: reread, merged: merged, changed: batch.changed,
                               notes: batch.notes, target: target)
            do {
                known = try PlistFile.replace(target, with: bytes, permissions: permissions, owner: owner)
            } catch {
                throw SettingsError(.invalidFile, path: target, detail: "not saved: \(error)")
            }
            finishSave(merged: merged)
            contents = merged
            writes += 1
            return .saved(reconcile(merged))
        } catch {
            // A generation is kept only for a save that happens: the failed one's goes again.
            if let kept { discardGeneration(kept, for: target) }
            restore(batch)
            throw error
        }
    }

    /// The file's new contents: `base` (what the file holds now; `nil` when only this process's
    /// values can be written) with each changed key path set to the store's value or removed.
    /// An old name a rename removed stays when the file holds another value there than the one
    /// moved (another program wrote it after the move), and so does everything on its path.
    static func merge(_ batch: SaveBatch, into base: PlistDictionary?) -> PlistDictionary {
        guard var merged = base else { return batch.values }
        var keptOldNames: [SettingsKey] = []
        for (old, moved) in batch.removedIfUnchanged {
            if let theirs = merged.value(at: old.components), theirs != moved { keptOldNames.append(old) }
        }
        for key in batch.changed {
            let overlapsKept = keptOldNames.contains {
                $0.components.starts(with: key.components) || key.components.starts(with: $0.components)
            }
            if overlapsKept { continue }
            _ = merged.setValue(batch.values.value(at: key.components), at: key.components[...])
        }
        return merged
    }

    /// The file's bytes in its format. XML cannot carry some strings (control characters other
    /// than tab, line feed and carriage return): rather than never saving again, the file
    /// becomes binary, which every reader of property lists reads, and that is reported once.
    private mutating func encode(_ dictionary: PlistDictionary, for target: String) throws(SettingsError) -> Data {
        let encoded = try Self.encode(dictionary, as: format, for: target)
        format = encoded.format
        if let reason = encoded.fellBack, !reportedBinaryFallback {
            reportedBinaryFallback = true
            diagnostics.append(SettingsDiagnostic(.fileError, Self.binaryFallbackMessage(target, reason)))
        }
        return encoded.bytes
    }

    /// Refuses to write more than `limit` bytes: a file this process (or the next) would then
    /// refuse to load. Shared by the store's file and model files.
    static func checkSize(_ bytes: Data, limit: Int, for target: String) throws(SettingsError) {
        guard bytes.count <= limit else {
            throw SettingsError(.invalidFile, path: target, detail: "not saved: \(PlistFile.tooLarge(bytes.count, limit: limit).operation), so it could not be loaded again")
        }
    }

    /// `dictionary` as `format`; when that is XML and XML cannot carry a value in it, as binary
    /// instead, with the reason in `fellBack`. Shared by the store's file and model files.
    static func encode(_ dictionary: PlistDictionary, as format: PlistFormat, for target: String)
        throws(SettingsError) -> (bytes: Data, format: PlistFormat, fellBack: String?) {
        do {
            return (try PlistValue.dictionary(dictionary).encoded(as: format), format, nil)
        } catch {
            guard format == .xml else {
                throw SettingsError(.invalidFile, path: target, detail: "not saved: \(PlistError.reason(error))")
            }
            do {
                return (try PlistValue.dictionary(dictionary).encoded(as: .binary), .binary, "\(error)")
            } catch {
                throw SettingsError(.invalidFile, path: target, detail: "not saved: \(PlistError.reason(error))")
            }
        }
    }

    /// The diagnostic for a file saved as binary because XML could not carry it.
    static func binaryFallbackMessage(_ target: String, _ reason: String) -> String {
        "\(target): saved as a binary property list, because XML cannot carry a value in it (\(reason))"
    }

    /// Moves a malformed file to `NAME.corrupt-<UTC timestamp>` beside it (the lock is held and
    /// it is still the file that was read), keeps at most ``PersistenceOptions/quarantineLimit``
    /// such files, and reports it.
    private mutating func quarantine(_ target: String, _ identity: PlistFile.Identity, _ problem: SettingsError) throws(SettingsError) {
        var problem = problem
        do {
            guard let destination = try Self.moveAside(malformed: target, identity, keeping: options.quarantineLimit) else { return }
            movedAside = URL(filePath: destination)
            problem.append(detail: "moved aside to \(destination); this process's values were written in its place")
        } catch {
            problem.append(detail: "could not move it aside (\(error)); not saved, and the next save tries again")
            throw problem
        }
        loadError = problem
        diagnostics.append(SettingsDiagnostic(.fileError, problem.description))
    }

    /// Moves a malformed file to `NAME.corrupt-<UTC timestamp>` beside it, if it is still the
    /// file that was read (`identity`), and removes the oldest such files beyond `limit`. Model
    /// files are quarantined the same way.
    ///
    /// - Returns: where it went, or `nil` when the file changed since it was read (not moved).
    static func moveAside(malformed target: String, _ identity: PlistFile.Identity, keeping limit: Int) throws(PlistFile.Failure) -> String? {
        guard try PlistFile.identity(of: target) == identity else { return nil }
        var destination = target + ".corrupt-" + timestamp()
        // Two in the same millisecond: never rename over one already moved aside.
        var n = 1
        while (try? PlistFile.identity(of: destination)) != nil {
            n += 1
            destination = target + ".corrupt-" + timestamp() + "-\(n)"
        }
        guard rename(target, destination) == 0 else { throw PlistFile.Failure("cannot move the file aside") }
        PlistFile.syncDirectory(PlistFile.directory(of: target))
        pruneQuarantine(target, keeping: max(1, limit))
        return destination
    }

    /// Removes the oldest `NAME.corrupt-*` files beyond the limit.
    private static func pruneQuarantine(_ target: String, keeping limit: Int) {
        let parts = PathParts(target)
        let prefix = parts.name + ".corrupt-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parts.directory) else { return }
        let kept = names.filter { $0.hasPrefix(prefix) }.sorted()
        for name in kept.dropLast(limit) {
            unlink(parts.directory + "/" + name)
        }
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

    /// Creates the file's directory (owner-only) when it is missing; model files use it too.
    static func createDirectory(of target: String) throws(SettingsError) {
        let directory = PathParts(target).directory
        var s = stat()
        if stat(directory, &s) == 0 {
            guard (s.st_mode & S_IFMT) == S_IFDIR else {
                throw SettingsError(.invalidFile, path: target, detail: "not saved: \(directory) is not a directory")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SettingsError(.invalidFile, path: target, detail: "not saved: cannot create its directory: \(PlistError.reason(error))")
        }
    }

    // MARK: External changes

    /// The file's contents when it changed since this process last read or wrote it, or `nil`
    /// when it did not (a process's own writes are recognised by identity and not reloaded).
    /// A file that is missing reads as empty; one that does not parse or cannot be used is
    /// reported once and ignored until it changes again (the values in memory stay).
    mutating func reloadIfChanged<R: ~Copyable>(reconcile: (PlistDictionary) -> R) -> R? {
        let target: PlistFile.Target
        let current: PlistFile.Identity?
        do {
            target = try resolved().file
            current = try PlistFile.identity(of: target.path)
        } catch {
            return nil  // unexaminable (or a link not followed) for now: look again next time
        }
        if current == known { return nil }
        switch read(target) {
        case .missing:
            known = nil
            guard !contents.isEmpty else { return nil }
            contents = PlistDictionary()
            reloads += 1
            return reconcile(contents)
        case .parsed(let dictionary, let format, let identity):
            known = identity
            self.format = format
            reloads += 1
            suspect = nil
            let changed = dictionary != contents
            if changed { noteReload(old: contents, new: dictionary, target: target.path) }
            contents = dictionary
            if loadError != nil, movedAside == nil { loadError = nil }  // fixed by hand
            return changed ? reconcile(dictionary) : nil
        case .malformed(var problem, let identity):
            if reported != identity {
                reported = identity
                problem.append(detail: "changed on disk but cannot be read; keeping the values in memory")
                diagnostics.append(SettingsDiagnostic(.fileError, problem.description))
            }
            return nil
        case .unusable(var problem):
            if let current, reported != current {
                reported = current
                problem.append(detail: "changed on disk but cannot be used; keeping the values in memory")
                diagnostics.append(SettingsDiagnostic(.fileError, problem.description))
            }
            return nil
        }
    }
}

extension SettingsError {
    /// Adds words to ``detail``, after any already there.
    mutating func append(detail more: String) {
        detail = detail.map { "\($0); \(more)" } ?? more
    }
}

/// Splits a path into its directory and last component.
struct PathParts {
    let directory: String
    let name: String

    init(_ path: String) {
        directory = PlistFile.directory(of: path)
        name = PlistFile.name(of: path)
    }
}
