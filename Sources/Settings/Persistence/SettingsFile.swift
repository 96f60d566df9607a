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
    /// That file, held open so that no other file can get its identity (``PlistFile/Held``).
    /// `nil` when it could not be held (past the process's budget): the identity is then not
    /// trusted, and the file is read again at the next save and at every reload.
    var knownFile: PlistFile.Held?
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
    /// The file's history and provenance, as this process last saw them (``PlistRecorder``).
    var recorder: PlistRecorder?
    /// Whether a failure to keep history was reported (once, until it works again).
    var historyFailureReported = false

    init(url: URL, format: PlistFormat, options: PersistenceOptions) {
        self.url = url
        self.path = url.path
        self.format = format
        self.options = options
        self.recorder = Self.makeRecorder(options)
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

    /// Reads and parses the file (``SettingsFileTransaction/read(_:limit:)``: bounded, never
    /// blocks on a FIFO). A file reached through a link that is not a property list is
    /// unusable, never malformed: it is never moved aside or replaced.
    func read(_ target: PlistFile.Target) -> Read {
        switch SettingsFileTransaction.read(target, limit: options.maximumFileSize) {
        case .missing: .missing
        case .parsed(let dictionary, let format, let identity): .parsed(dictionary, format, identity)
        case .malformed(let problem, let identity): .malformed(SettingsError(.invalidFile, path: target.path, underlying: problem), identity)
        case .unusable(let failure): .unusable(SettingsError(.invalidFile, path: failure.target, detail: failure.detail))
        }
    }

    /// Parses file contents (``SettingsFileTransaction/parse(_:at:)``); model files use it too.
    static func parse(_ bytes: [UInt8], at target: String) -> Result<(PlistDictionary, PlistFormat), SettingsError> {
        SettingsFileTransaction.parse(bytes, at: target).mapError { SettingsError(.invalidFile, path: target, underlying: $0) }
    }

    /// Creates the file's directory (owner-only) when it is missing; schemas and reports use it too.
    static func createDirectory(of target: String) throws(SettingsError) {
        do {
            try SettingsFileTransaction.createDirectories(for: target)
        } catch {
            throw SettingsError(.invalidFile, path: target, detail: "not saved: \(error)")
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
            knownFile = PlistFile.Held.take(target.path, as: identity)
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

    /// What one save writes: taken from the store by its save (the store's saves run one at a
    /// time, on its persistence thread) and given back to it when the save does not write it.
    struct SaveBatch {
        /// The store's user layer.
        var values: PlistDictionary
        /// The key paths changed since the last save.
        var changed: [SettingsKey]
        /// Old names a rename removed, with the value moved: removed from the file only while
        /// it still holds that value (a value another program wrote there since is kept).
        var removedIfUnchanged: [SettingsKey: PlistValue] = [:]
        /// Origins other than this process's own write, per key path (sync, migration, restore).
        var notes: [[String]: SettingsProvenance] = [:]
    }

    /// What one attempt to save did. Every outcome but ``saved(_:)`` leaves the batch unsaved:
    /// the store gives it back.
    enum SaveOutcome {
        /// The file already held every change: nothing was written.
        case unchanged
        /// Another process holds the lock (at this path): try again later.
        case busy(lock: String)
        /// The file on disk is malformed; it is looked at again after this long before it is
        /// moved aside.
        case settling(Duration)
        /// Saved: the file's contents now.
        case saved(PlistDictionary)
        /// Not saved, for this reason (the next attempt looks again).
        case failed(SettingsError)
    }

    /// Tries once to write `batch` (this process's changes) into the file, as one
    /// ``SettingsFileTransaction`` (the change every writer of a settings file makes): under the
    /// lock (`held`, or taken without waiting), the file's current contents are read when another
    /// process changed it, the changed key paths are set to their values in this process (or
    /// removed), history and provenance are recorded, and the result replaces the file durably.
    /// A malformed file on disk is moved aside once it has stayed malformed for the settle delay,
    /// never overwritten; one that cannot be read is never touched (the next attempt looks again).
    ///
    /// The batch is taken by the store before the call, and the outcome says what became of it:
    /// nothing here calls back into the store.
    ///
    /// - Parameters:
    ///   - batch: the store's user layer and the key paths changed since the last save.
    ///   - held: the file's lock, when a ``LockWaiter`` already took it.
    mutating func save(_ batch: SaveBatch, held: PlistFile.Lock?) -> SaveOutcome {
        var transaction = SettingsFileTransaction.Options()
        transaction.maximumSize = options.maximumFileSize
        transaction.lockWait = .none
        transaction.newFileFormat = format
        transaction.removesLeftovers = !sweptLeftovers
        if let suspect, ContinuousClock.now - suspect.since >= options.settleDelay {
            transaction.malformed = .moveAside(ifStill: suspect.identity, keeping: options.quarantineLimit)
        }
        let outcome: SettingsFileTransaction.Outcome
        do {
            outcome = try SettingsFileTransaction.run(
                at: path, options: transaction,
                known: known.map { .init(identity: $0, contents: contents, format: format, held: knownFile) },
                held: held, recorder: &recorder
            ) { (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
                let merged = Self.merge(batch, into: current.movedAside == nil ? current.contents ?? PlistDictionary() : nil)
                return .init(contents: merged, changed: batch.changed.map(\.components),
                             writer: SettingsProvenance.thisProcess(.write), writers: batch.notes)
            }
        } catch {
            switch error.kind {
            case .malformed(let identity, _):
                // Looked at again after the settle delay: moved aside only if still the same.
                guard let seen = suspect, seen.identity == identity else {
                    suspect = Suspect(identity: identity, since: .now)
                    return .settling(options.settleDelay)
                }
                return .settling(max(.zero, options.settleDelay - (ContinuousClock.now - seen.since)))
            case .unusable:
                var problem = SettingsError(.invalidFile, path: error.target, detail: error.detail)
                problem.append(detail: "not saved; the changes are kept in memory")
                return .failed(problem)
            default:
                return .failed(SettingsError(.invalidFile, path: error.target, detail: error.detail))
            }
        }
        switch consume outcome {
        case .busy(let lockPath):  // the lock was not taken: nothing was swept
            return .busy(lock: lockPath)
        case .unchanged:
            sweptLeftovers = true
            return .unchanged
        case .written(let written):
            sweptLeftovers = true
            suspect = nil
            if let (destination, parseError) = written.current.movedAside {
                var problem = SettingsError(.invalidFile, path: written.current.target, underlying: parseError)
                movedAside = URL(filePath: destination)
                problem.append(detail: "moved aside to \(destination); this process's values were written in its place")
                loadError = problem
                diagnostics.append(SettingsDiagnostic(.fileError, problem.description))
            }
            if let reason = written.fellBackToBinary, !reportedBinaryFallback {
                reportedBinaryFallback = true
                diagnostics.append(SettingsDiagnostic(.fileError, SettingsFileTransaction.binaryFallbackMessage(written.current.target, reason)))
            }
            noteHistory(problem: written.historyProblem)
            known = written.known.identity
            knownFile = written.known.held
            format = written.known.format
            contents = written.known.contents
            finishSave(merged: contents)
            writes += 1
            return .saved(contents)
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

    /// Refuses to write more than `limit` bytes: a file this process (or the next) would then
    /// refuse to load. Shared by the store's file and model files.
    static func checkSize(_ bytes: Data, limit: Int, for target: String) throws(SettingsError) {
        guard bytes.count <= limit else {
            throw SettingsError(.invalidFile, path: target, detail: "not saved: \(PlistFile.tooLarge(bytes.count, limit: limit).operation), so it could not be loaded again")
        }
    }

    // MARK: External changes

    /// The file's contents when it changed since this process last read or wrote it, or `nil`
    /// when it did not (a process's own writes are recognised by identity and not reloaded).
    /// A file that is missing reads as empty; one that does not parse or cannot be used is
    /// reported once and ignored until it changes again (the values in memory stay).
    mutating func reloadIfChanged() -> PlistDictionary? {
        let target: PlistFile.Target
        let current: PlistFile.Identity?
        do {
            target = try resolved().file
            current = try PlistFile.identity(of: target.path)
        } catch {
            return nil  // unexaminable (or a link not followed) for now: look again next time
        }
        if current != nil, current == known, knownFile?.identity == current { return nil }
        switch read(target) {
        case .missing:
            known = nil
            knownFile = nil
            guard !contents.isEmpty else { return nil }
            contents = PlistDictionary()
            reloads += 1
            return contents
        case .parsed(let dictionary, let format, let identity):
            known = identity
            knownFile = PlistFile.Held.take(target.path, as: identity)
            self.format = format
            reloads += 1
            suspect = nil
            let changed = dictionary != contents
            if changed { noteReload(old: contents, new: dictionary, target: target.path) }
            contents = dictionary
            if loadError != nil, movedAside == nil { loadError = nil }  // fixed by hand
            return changed ? dictionary : nil
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
