#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
package import SettingsPlist

/// One change of a settings file on disk, made the one way every writer makes it: the store's
/// saves, model files, every `settings` command that changes a file, and the integrations.
///
/// ```
/// resolve (link rule) → lock → re-read → apply → check → record → replace → unlock
/// ```
///
/// - **resolve**: a link is followed only by the link rule (``PlistFile/target(of:)``); nothing
///   is created beside a file a link leads to (not even the lock) before it is known to be a
///   property list.
/// - **lock**: the advisory lock beside the file (``PlistFile/lockPath(for:)``), taken without
///   waiting (the store, which retries) or waiting at most a bound (model files, the tool).
/// - **re-read**: the file as it is now, unless it is still what this writer last read or wrote
///   (``Known``); bounded, never blocking on a FIFO. A file that does not parse is refused or,
///   where the writer says so, moved aside to `NAME.corrupt-<UTC timestamp>`; one that cannot be
///   used is refused and left exactly as it is.
/// - **apply**: the writer's edit of what the file holds now (a merge of a store's changes, a
///   command's edit); nothing is written when it changes nothing.
/// - **check**: the bytes fit ``Options/maximumSize`` (a larger file could not be loaded again),
///   XML falls back to binary when it cannot carry a value, and the writer's own check runs (a
///   schema, the administrator's locks).
/// - **record**: history and provenance (``PlistRecorder``), before the replace, so a process
///   that reloads the new file finds its provenance there. The generation is kept pending and
///   confirmed right after the rename: one killed in between leaves none of a change that never
///   happened.
/// - **replace**: atomic and durable, keeping the file's permissions and owner. It is begun
///   before the record step (``PlistFile/Replacement``: the new bytes are written beside the file
///   and sent on their way to the device) and made after it, so the device writes while history
///   is recorded; a refused record step gives it up. When it fails, the generation recorded for
///   it is removed again, so history holds only changes that happened.
package enum SettingsFileTransaction {
    /// How the lock is taken.
    package enum LockWait: Sendable {
        /// Once, without waiting: another holder makes the change ``Outcome/busy(lock:)``.
        case none
        /// Waiting at most this long, then ``Failure/Kind/locked``.
        case upTo(Duration)
    }

    /// What is done with a file that does not parse.
    package enum MalformedFile: Sendable, Equatable {
        /// Refused with ``Failure/Kind/malformed(_:)``: nothing is changed.
        case refuse
        /// Moved aside (when it is still the file with `identity`, or any malformed file when
        /// `identity` is `nil`), keeping at most `keeping` such files; the change is then
        /// applied to nothing (the writer's whole state is written).
        case moveAside(ifStill: PlistFile.Identity?, keeping: Int)
    }

    /// How a writer changes its file.
    package struct Options: Sendable {
        /// The largest file written (and read).
        package var maximumSize = PlistFile.maximumSize
        package var lockWait = LockWait.upTo(.seconds(2))
        /// A lock file this change had to create is removed again (while still held) when the
        /// file is not a settings domain (model files, a plain file given to the tool).
        package var removesCreatedLockFile = false
        /// Where the user may not create files (another user's directory), a change of a plain
        /// file is made without the lock, as any editor would, when no lock file exists there.
        package var lockOptionalWhereNotOwned = false
        package var malformed = MalformedFile.refuse
        /// Permissions of a new file.
        package var newFilePermissions: UInt32 = 0o600
        /// The format to write; `nil` keeps the file's own (``newFileFormat`` for a new file),
        /// falling back to binary when XML cannot carry a value.
        package var format: PlistFormat?
        package var newFileFormat = PlistFormat.xml
        /// Removes temporary files left beside the file (and its provenance log and history journal) by a writer
        /// killed mid-change: a store does it at its first save.
        package var removesLeftovers = false

        package init() {}
    }

    /// The file as this writer last read or wrote it: not read again while it is unchanged.
    package struct Known: Sendable {
        package var identity: PlistFile.Identity
        package var contents: PlistDictionary
        package var format: PlistFormat
        /// The file held open (after a change, the new file; a writer that keeps ``Known`` keeps
        /// this too), so that no other file can get its inode number while it is trusted.
        package var held: PlistFile.Held?

        package init(identity: PlistFile.Identity, contents: PlistDictionary, format: PlistFormat, held: PlistFile.Held? = nil) {
            self.identity = identity
            self.contents = contents
            self.format = format
            self.held = held
        }

        /// Whether the file found with `identity` is this one, unchanged: the same identity, and
        /// the file held open since (without ``held``, another file may have its inode number).
        package func isStill(_ identity: PlistFile.Identity?) -> Bool {
            guard let identity, let held else { return false }
            return held.identity == identity && self.identity == identity
        }
    }

    /// The file under the lock, as the edit sees it.
    package struct Current {
        /// Its contents; `nil` when it does not exist (or was moved aside).
        package var contents: PlistDictionary?
        package var format: PlistFormat?
        package var identity: PlistFile.Identity?
        /// Whether it was read again: another writer changed it since ``Known``.
        package var wasReread: Bool
        /// Where a malformed file was moved, if it was, and why it did not parse.
        package var movedAside: (destination: String, problem: PlistError)?
        /// The path of the file itself (after the link rule).
        package var target: String
    }

    /// What an edit changes.
    package struct Edit {
        /// The file's new contents.
        package var contents: PlistDictionary
        /// The key paths changed (recorded in history and provenance).
        package var changed: [[String]]
        /// Who changed them: per key path where not `writer`.
        package var writers: [[String]: SettingsProvenance]
        package var writer: SettingsProvenance

        package init(contents: PlistDictionary, changed: [[String]], writer: SettingsProvenance,
                     writers: [[String]: SettingsProvenance] = [:]) {
            self.contents = contents
            self.changed = changed
            self.writer = writer
            self.writers = writers
        }
    }

    /// What a change did.
    package enum Outcome {
        /// Another process holds the lock (``LockWait/none``): try again later.
        case busy(lock: String)
        /// The edit changed nothing: nothing was written.
        case unchanged(Current)
        /// The file was replaced.
        case written(Written)
    }

    /// A change made.
    package struct Written {
        package var known: Known
        package var current: Current
        /// Why the file became binary (XML could not carry a value), if it did.
        package var fellBackToBinary: String?
        /// History or provenance could not be kept (the change was made), reported by the writer.
        package var historyProblem: String?
        /// The generation kept for it.
        package var generation: Int?
    }

    /// Why a change was not made; the file is left as it was.
    package struct Failure: Error, CustomStringConvertible {
        package enum Kind {
            /// The file (or its directory) cannot be used: refused, left as it is.
            case unusable
            /// It does not parse (its identity, the parse error with line and column).
            case malformed(PlistFile.Identity, PlistError)
            /// Another process held the lock for longer than the bound.
            case locked(String)
            /// The new contents cannot be written (too large, not encodable, replace failed).
            case notWritten
            /// The edit or the check refused it.
            case refused
        }

        package var kind: Kind
        /// The file (after the link rule).
        package var target: String
        /// What went wrong, without the path (callers name the file as their user gave it).
        package var detail: String

        package init(_ kind: Kind, _ target: String, _ detail: String) {
            self.kind = kind
            self.target = target
            self.detail = detail
        }

        package var description: String { "\(target): \(detail)" }
    }

    /// Makes one change of the file at `path`; see ``SettingsFileTransaction``.
    ///
    /// - Parameters:
    ///   - path: the file as given (a link is followed by the link rule).
    ///   - known: the file as this writer last read or wrote it, if it did.
    ///   - held: a lock already taken (by a waiter of the store's): used instead of taking one.
    ///   - recorder: history and provenance; `nil` keeps none.
    ///   - check: the writer's check of the change (old contents, new contents).
    ///   - edit: the writer's edit of what the file holds now; `nil` changes nothing.
    package static func run(
        at path: String,
        options: Options,
        known: Known?,
        held: PlistFile.Lock? = nil,
        recorder: inout PlistRecorder?,
        check: (PlistDictionary?, PlistDictionary) throws(Failure) -> Void = { _, _ throws(Failure) in },
        edit: (Current) throws(Failure) -> Edit?
    ) throws(Failure) -> Outcome {
        let file: PlistFile.Target
        do {
            file = try PlistFile.target(of: path)
        } catch {
            held?.release()
            throw Failure(.unusable, path, error.description)
        }
        let target = file.path
        if file.isThroughLink, known == nil || (try? PlistFile.identity(of: target)) != known?.identity {
            if case .unusable(let problem) = read(file, limit: options.maximumSize) {
                held?.release()
                throw problem
            }
        }
        let lock: PlistFile.Lock?
        if let held {
            lock = held
        } else {
            do throws(PlistFile.Failure) {
                // A file that was there a moment ago has its directories (the walk looked at each).
                if !file.existed { try createDirectories(for: target) }
            } catch {
                throw Failure(.notWritten, target, error.description)
            }
            switch try takeLock(for: target, options: options) {
            case .taken(let taken): lock = taken
            case .withoutLock: lock = nil
            case .busy(let lockPath): return .busy(lock: lockPath)
            }
        }
        defer { lock?.release(removingFile: options.removesCreatedLockFile && lock?.created == true) }
        if options.removesLeftovers {
            PlistFile.removeLeftoverTemporaryFiles(beside: target)
            if (try? PlistFile.existingCompanionDirectory(for: target)) != nil {
                PlistFile.removeLeftoverTemporaryFiles(beside: SettingsProvenanceLog.path(for: target))
                PlistFile.removeLeftoverTemporaryFiles(beside: PlistHistory.journal(for: target))
                // Written without this lock: only those too old to be a writer's in progress.
                PlistFile.removeLeftoverTemporaryFiles(beside: PlistFile.companionDirectory(for: target) + "/" + PlistLayersManifest.fileName,
                                                       olderThan: 60)
            }
        }
        var current = try reread(file, known: known, options: options)
        guard let change = try edit(current) else { return .unchanged(current) }
        try check(current.contents, change.contents)
        let wanted = options.format ?? current.format ?? options.newFileFormat
        let encoded = try encode(change.contents, as: wanted, fallingBack: options.format == nil, for: target)
        guard encoded.bytes.count <= options.maximumSize else {
            throw Failure(.notWritten, target, "not saved: \(PlistFile.tooLarge(encoded.bytes.count, limit: options.maximumSize).operation), so it could not be loaded again")
        }
        // The new bytes start on their way to the disk before the record step, which then
        // overlaps the device's write instead of adding to it (``PlistFile/Replacement``). A
        // recorder that may refuse the change (the tool's) records first: its refusal, which
        // names the values that would be lost, is then what a full disk reports.
        func begin(overlapped: Bool) throws(Failure) -> PlistFile.Replacement {
            do {
                return try PlistFile.Replacement(target, with: encoded.bytes,
                                                 permissions: current.identity?.permissions ?? options.newFilePermissions,
                                                 owner: current.identity?.owner, overlapped: overlapped)
            } catch {
                throw Failure(.notWritten, target, "not saved: \(error)")
            }
        }
        let early = recorder?.refusesUnkeptDiscard == true ? nil : try begin(overlapped: recorder?.records == true)
        var recorded: PlistRecorder.Recorded?
        if recorder != nil {
            // `before` is what this writer last wrote or read when the file is unchanged since (`known`).
            let beforeIsKnown = known?.isStill(current.identity) == true
            do {
                recorded = try recorder?.record(encoded.bytes, format: encoded.format, edit: change, before: current.contents,
                                                previous: current.wasReread ? known?.contents : nil,
                                                beforeIsKnown: beforeIsKnown, target: target)
            } catch {
                early?.abandon()
                throw error
            }
        }
        let replacement: PlistFile.Replacement
        do throws(Failure) {
            if let early { replacement = early } else { replacement = try begin(overlapped: false) }
        } catch {
            if let number = recorded?.generation { recorder?.discard(number, for: target) }
            throw error
        }
        let held: PlistFile.Held
        do {
            held = try replacement.commitHolding {
                // Made: its generation is confirmed (before the directory's flush, so a kill
                // rarely falls between the two).
                if recorded?.generation != nil, let problem = recorder?.confirm(for: target), recorded?.problem == nil {
                    recorded?.problem = problem
                }
            }
        } catch {
            if let number = recorded?.generation { recorder?.discard(number, for: target) }
            throw Failure(.notWritten, target, "not saved: \(error)")
        }
        current.format = encoded.format
        return .written(Written(
            known: Known(identity: held.identity, contents: change.contents, format: encoded.format, held: held.kept), current: current,
            fellBackToBinary: encoded.fellBack, historyProblem: recorded?.problem, generation: recorded?.generation))
    }

    // MARK: The steps

    private enum Locking {
        case taken(PlistFile.Lock)
        case withoutLock
        case busy(String)
    }

    private static func takeLock(for target: String, options: Options) throws(Failure) -> Locking {
        let lockPath = PlistFile.lockPath(for: target)
        if options.lockOptionalWhereNotOwned, !PlistFile.belongsToUser(directory: PlistFile.directory(of: target)),
           (try? PlistFile.identity(of: lockPath)) == .some(nil) {
            return .withoutLock
        }
        do {
            switch options.lockWait {
            case .none:
                guard let lock = try PlistFile.tryLock(lockPath) else { return .busy(lockPath) }
                return .taken(lock)
            case .upTo(let bound):
                guard let lock = try PlistFile.lock(lockPath, waitingAtMost: bound) else {
                    throw Failure(.locked(lockPath), target, "another process held the lock \(lockPath) for longer than \(describe(bound)); not saved")
                }
                return .taken(lock)
            }
        } catch let error as Failure {
            throw error
        } catch let error as PlistFile.Failure {
            throw Failure(.notWritten, target, "not saved: \(error)")
        } catch {
            throw Failure(.notWritten, target, "not saved: \(error)")
        }
    }

    private static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return seconds == 1 ? "1 second" : "\(seconds) seconds" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18) seconds"
    }

    private static func reread(_ file: PlistFile.Target, known: Known?, options: Options) throws(Failure) -> Current {
        let target = file.path
        var current = Current(contents: nil, format: nil, identity: nil, wasReread: false, movedAside: nil, target: target)
        let identity: PlistFile.Identity?
        do {
            identity = try PlistFile.identity(of: target)
        } catch {
            throw Failure(.unusable, target, "not saved: \(error)")
        }
        guard let identity else { return current }  // missing: the edit starts from nothing
        if let known, known.isStill(identity) {
            current.contents = known.contents
            current.format = known.format
            current.identity = identity
            return current
        }
        switch read(file, limit: options.maximumSize) {
        case .missing:
            return current
        case .parsed(let contents, let format, let identity):
            current.contents = contents
            current.format = format
            current.identity = identity
            current.wasReread = known != nil
            return current
        case .unusable(let problem):
            throw problem
        case .malformed(let problem, let identity):
            guard case .moveAside(let only, let keeping) = options.malformed, only == nil || only == identity else {
                throw Failure(.malformed(identity, problem), target, problem.description)
            }
            let destination: String?
            do {
                destination = try PlistFile.moveAside(malformed: target, identity, keeping: keeping)
            } catch {
                throw Failure(.notWritten, target, "\(problem.message); could not move it aside (\(error)); not saved, and the next save tries again")
            }
            guard let destination else {
                throw Failure(.notWritten, target, "\(problem.message); it changed while being saved; not saved")
            }
            current.movedAside = (destination, problem)
            return current
        }
    }

    /// What reading a settings file found.
    package enum Read {
        case missing
        case parsed(PlistDictionary, PlistFormat, PlistFile.Identity)
        case malformed(PlistError, PlistFile.Identity)
        /// It exists but cannot be used: permission denied, not a regular file, too large, or
        /// reached through a link and not a property list (never moved aside or replaced).
        case unusable(Failure)
    }

    /// Reads and parses a settings file, bounded (never blocks on a FIFO, never allocates past
    /// `limit`). Every reader of a settings file (a store's load and reload, model files) uses it.
    package static func read(_ file: PlistFile.Target, limit: Int) -> Read {
        let read: PlistFile.Contents?
        do {
            read = try PlistFile.read(file.path, limit: limit, followingLinks: false)
        } catch {
            return .unusable(Failure(.unusable, file.path, error.description))
        }
        guard let read else { return .missing }
        switch parse(read.bytes, at: file.path) {
        case .success(let (dictionary, format)): return .parsed(dictionary, format, read.identity)
        case .failure(let problem) where file.isThroughLink:
            return .unusable(Failure(.unusable, file.path, file.notAPropertyList(problem.message).operation))
        case .failure(let problem): return .malformed(problem, read.identity)
        }
    }

    /// Parses a settings file's bytes: a dictionary and its format, or an error naming the file
    /// and the line and column (XML) or byte offset (binary).
    package static func parse(_ bytes: [UInt8], at target: String) -> Result<(PlistDictionary, PlistFormat), PlistError> {
        do {
            let value = try PlistValue(decoding: bytes)
            guard case .dictionary(let dictionary) = value else {
                return .failure(PlistError(.invalidValue, "the root is \(value.typeNameWithArticle), expected a dictionary").inFile(target))
            }
            return .success((dictionary, PlistFormat.detect(bytes)))
        } catch {
            return .failure(error.inFile(target))
        }
    }

    /// `dictionary` as `format`; when that is XML, `fallingBack` allows it and XML cannot carry
    /// a value, as binary instead, with the reason in `fellBack`.
    package static func encode(_ dictionary: PlistDictionary, as format: PlistFormat, fallingBack: Bool, for target: String)
        throws(Failure) -> (bytes: Data, format: PlistFormat, fellBack: String?) {
        do {
            return (try PlistValue.dictionary(dictionary).encoded(as: format), format, nil)
        } catch {
            guard format == .xml, fallingBack else {
                throw Failure(.notWritten, target, "not saved: \(PlistError.reason(error))")
            }
            do {
                return (try PlistValue.dictionary(dictionary).encoded(as: .binary), .binary, "\(error)")
            } catch {
                throw Failure(.notWritten, target, "not saved: \(PlistError.reason(error))")
            }
        }
    }

    /// The one message for a file saved as binary because XML could not carry a value.
    package static func binaryFallbackMessage(_ target: String, _ reason: String) -> String {
        "\(target): saved as a binary property list, because XML cannot carry a value in it (\(reason))"
    }

    /// Creates the directories of a new settings file, owner-only (0700), without recursion.
    package static func createDirectories(for target: String) throws(PlistFile.Failure) {
        var missing: [String] = []
        var directory = PlistFile.directory(of: target)
        while true {
            var s = stat()
            if stat(directory, &s) == 0 {
                guard (s.st_mode & S_IFMT) == S_IFDIR else {
                    throw PlistFile.Failure("\(directory) is not a directory")
                }
                break
            }
            guard errno == ENOENT else { throw PlistFile.Failure("cannot use \(directory)", code: errno) }
            missing.append(directory)
            let parent = PlistFile.directory(of: directory)
            if parent == directory || parent.isEmpty { break }
            directory = parent
        }
        for directory in missing.reversed() {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw PlistFile.Failure("cannot create its directory \(directory)", code: errno)
            }
        }
    }
}
