#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
package import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The record step of a ``SettingsFileTransaction``: the file's history (``PlistHistory``) and
/// provenance (``SettingsProvenanceLog``), kept the same way by every writer.
///
/// A writer that changes a file again and again (a store) keeps one recorder, so a save neither
/// reads the log nor lists the generations while nobody else changed them; a writer that makes
/// one change (a `settings` command) makes a new one.
package struct PlistRecorder: Sendable {
    /// How many generations, and bytes of them, are kept.
    package var limits: PlistHistory.Limits
    /// Whether a change that would discard values no generation holds (a hand edit) is refused
    /// when the generation that keeps them cannot be written (the tool's changes); otherwise
    /// failures to keep history never stop a change (a program's saves).
    package var refusesUnkeptDiscard: Bool

    /// The provenance log as last read or written, and the identity of its file then.
    package private(set) var log: SettingsProvenanceLog?
    /// (Internal for tests, which make it read as a reused identity.)
    var logIdentity: PlistFile.Identity?
    /// The two copies of ``log`` handed to readers in turn (``publishedLog()``), and the one next.
    /// One more log's memory than handing out ``log`` itself, which the next change would then
    /// copy whole (and the hand-out after it free whole): with several writers of a 1,000-key
    /// file, that copy and that free were 8 % of each writer's time.
    private var copies = (SettingsProvenanceLog(), SettingsProvenanceLog())
    private var nextCopy = 0
    /// The history journal as this writer last read or changed it.
    private var generations = PlistHistory.Known()
    /// Leaves found changed on disk (by a reload, or a re-read under the lock), and when.
    private var seen: [[String]: Date] = [:]
    /// Whether the file as first seen was checked against the log (values set by hand, or by an
    /// older library, while this writer did not run), and when it was first seen.
    private var verified = false
    private var firstSeen = Date()
    /// Whether the history and provenance kept before a limit of 0 were removed.
    private var removedForNoHistory = false
    /// The key paths along which ``log`` may hold an entry without its leaf in the file as this
    /// writer last knew it (wrote it, or saw it at a reload): what others' generations set since,
    /// and what changed in the file since. A change prunes only along these and its own paths.
    /// `nil` (prune the whole log) until this writer first prunes it, and again whenever the
    /// log is read whole from its file or a recorded change was not made.
    private var pruneAlong: [[String]]?
    /// Beyond this many paths a prune looks at every entry (a look-up each) rather than
    /// comparing each entry with every path.
    static let largestTargetedPrune = 64

    /// How many generations may carry entries the log's own file does not hold yet: the log is
    /// written whole once per this many changes or per the history limit, whichever is fewer
    /// (so no generation that carries entries goes before the file holds them; sooner when the
    /// byte budget lets one go). Each time, every other writer of the file reads the log again,
    /// so the fewer the better: at the default limit of 20, once per 20 saves.
    static let foldInterval = 64
    /// The most entries a generation carries: a change of more writes the log whole (where its
    /// bounds apply) instead.
    static let largestDelta = 512

    /// Whether a change is recorded at all (a limit of 0 keeps neither history nor provenance).
    package var records: Bool { limits.count > 0 }

    package init(limits: PlistHistory.Limits, refusesUnkeptDiscard: Bool = false) {
        self.limits = limits
        self.refusesUnkeptDiscard = refusesUnkeptDiscard
    }

    /// What recording a change did.
    package struct Recorded {
        /// The generation kept for the change, pending until ``confirm(for:)`` (removed again by
        /// ``discard(_:for:)`` when the file then cannot be replaced).
        package var generation: Int?
        /// History or provenance could not be kept; the change is made.
        package var problem: String?
    }

    /// The log beside `target`, read again only when its file changed since this writer last
    /// read or wrote it.
    package mutating func currentLog(for target: String) -> SettingsProvenanceLog {
        guard limits.count > 0 else {
            // No history, no provenance: what was kept goes once, and nothing is known.
            if !removedForNoHistory {
                removedForNoHistory = true
                PlistHistory.removeAll(for: target, foldingProvenance: false)  // the log goes too: nothing to fold it into
                if (try? PlistFile.existingCompanionDirectory(for: target)) != nil { unlink(SettingsProvenanceLog.path(for: target)) }
            }
            log = SettingsProvenanceLog.unknown
            return SettingsProvenanceLog.unknown
        }
        let path = SettingsProvenanceLog.path(for: target)
        let identity = try? PlistFile.identity(of: path)
        // Another writer's change shows as a new log file or as a generation this writer did
        // not keep (its entries travel in the generation until the log is next written).
        if let log, identity == logIdentity, generations.checkCurrent(for: target) { return log }
        // The generations after this log's mark, read once for the two ways below.
        var deltasRead: [(number: Int, entries: PlistDictionary)]?
        if var log, identity != nil, identity == logIdentity {
            // Only generations changed (another writer saved): their entries, not the whole file,
            // unless one of them says its writer wrote the file (whose identity then reads the same).
            let deltas = generations.provenanceDeltas(for: target, after: log.through)
            deltasRead = deltas
            if !generations.logWritten(after: log.through), generations.holdsAll(after: log.through, through: generations.newest ?? 0) {
                self.log = nil
                let applied = log.catchUp(with: deltas)
                self.log = log
                notePruneAlong(applied)
                return log
            }
        }
        if var log, identity != nil, let lineage = log.lineage, !log.uncarried,
           let marks = SettingsProvenanceLog.fileMarks(for: target), marks.lineage == lineage, marks.through >= log.through {
            // Another writer wrote the file whole, as the file before it (of this log's lineage)
            // with the generations since applied: when those after this log's mark are all still
            // kept, their entries, not the whole file (with several processes saving one file,
            // reading it whole after each writer's fold was a tenth of their work).
            let deltas = deltasRead ?? generations.provenanceDeltas(for: target, after: log.through)
            if let newest = generations.newest, newest >= marks.through,
               generations.holdsAll(after: log.through, through: newest) {
                self.log = nil
                let applied = log.catchUp(asFileThrough: marks.through, with: deltas)
                self.log = log
                logIdentity = marks.identity
                notePruneAlong(applied)
                return log
            }
        }
        // The history records are read only where this writer has not read them yet.
        var known = generations
        let read = (try? SettingsProvenanceLog.load(for: target, keepingEncoding: true, updating: log,
                                                    deltas: { known.provenanceDeltas(for: target, after: $0) })) ?? SettingsProvenanceLog()
        generations = known
        log = read
        pruneAlong = nil
        logIdentity = identity
        return read
    }

    /// Adds paths along which the next change prunes; past ``largestTargetedPrune`` it prunes
    /// the whole log instead, so a writer that reloads often and saves rarely keeps no growing list.
    private mutating func notePruneAlong(_ paths: [[String]]) {
        guard var along = pruneAlong else { return }
        along += paths
        pruneAlong = along.count > Self.largestTargetedPrune ? nil : along
    }

    /// ``log`` (empty when none was read yet) for a reader that keeps it until the next hand-out:
    /// one of two copies, handed out in turn, each brought up to date with only the entries
    /// changed since it was last handed out (``SettingsProvenanceLog/mirror(into:slot:)``).
    package mutating func publishedLog() -> SettingsProvenanceLog {
        guard var log else { return SettingsProvenanceLog() }
        self.log = nil  // not shared while its marks change
        defer {
            self.log = log
            nextCopy ^= 1
        }
        if nextCopy == 0 {
            log.mirror(into: &copies.0, slot: 0)
            return copies.0
        }
        log.mirror(into: &copies.1, slot: 1)
        return copies.1
    }

    /// Notes when the file was first seen (at a store's load): leaves that no entry describes
    /// are recorded as changed on disk then.
    package mutating func noteFirstSeen(at date: Date = Date()) {
        firstSeen = date
    }

    /// At a reload: leaves changed by others are noted as seen now (recorded at the next change
    /// unless their writer recorded them).
    ///
    /// - Returns: the log with them, for a store to publish.
    package mutating func noteReload(old: PlistDictionary, new: PlistDictionary, target: String) -> SettingsProvenanceLog {
        var log = currentLog(for: target)
        let now = Date()
        let changed = new.changedLeaves(from: old)
        notePruneAlong(changed)
        for key in changed where seen[key] == nil { seen[key] = now }
        for (path, date) in seen { log.noteUnrecorded([path], in: new, seenAt: date) }
        return log
    }

    /// Records a change before the file is replaced: leaves others changed without recording
    /// it (a hand edit) are recorded as changed on disk and the file as it was is kept as a
    /// generation of its own; `bytes` are kept as a generation; the edit's writers are recorded
    /// as the setters of its changed keys. Entries are checked against their value's digest, so
    /// an entry written for a change that a crash then stopped never describes the value left.
    ///
    /// - Parameters:
    ///   - bytes: the file's new bytes, and their format.
    ///   - edit: what changed, and who changed it.
    ///   - before: what the file holds now (`nil`: missing, or moved aside).
    ///   - previous: what this writer last knew of it, when another writer changed it since.
    ///   - beforeIsKnown: whether `before` is the file as this writer last wrote or read it
    ///     (unchanged since): then, after a change this recorder recorded, its prune looks only
    ///     along the new change's key paths.
    ///   - target: the file.
    /// - Throws: only with ``refusesUnkeptDiscard``, when the change would discard values no
    ///   generation holds and keeping one failed.
    package mutating func record(_ bytes: Data, format: PlistFormat, edit: SettingsFileTransaction.Edit,
                                 before: PlistDictionary?, previous: PlistDictionary?, beforeIsKnown: Bool = false,
                                 target: String) throws(SettingsFileTransaction.Failure) -> Recorded {
        var recorded = Recorded()
        var log = currentLog(for: target)
        guard limits.count > 0 else {
            self.log = log
            return recorded  // a limit of 0 keeps neither history nor provenance
        }
        let carriedBefore = !log.uncarried  // every earlier change travels in a generation kept
        // The log is changed below: held only here meanwhile, so the change does not copy its
        // entries (set back at the end; a change refused on the way reads it again next time).
        self.log = nil
        var generations = self.generations
        defer { self.generations = generations }
        func attempt(_ body: () throws(PlistFile.Failure) -> Void) -> PlistFile.Failure? {
            do {
                try body()
                return nil
            } catch {
                if recorded.problem == nil { recorded.problem = "its history or provenance could not be kept (\(error))" }
                return error
            }
        }
        var mustWriteLog = false
        if let before {
            log.reconcile(with: before)  // a killed save's generation never describes the values left
            let now = Date()
            if !verified {
                verified = true
                for path in log.unrecordedLeaves(in: before) where seen[path] == nil { seen[path] = firstSeen }
            }
            if let previous {
                let changed = before.changedLeaves(from: previous)
                notePruneAlong(changed)
                for key in changed where seen[key] == nil { seen[key] = now }
            }
            var unrecorded = false
            for (path, date) in seen {
                unrecorded = log.noteUnrecorded([path], in: before, seenAt: date) || unrecorded
            }
            if unrecorded {
                let paths = seen.keys.sorted { $0.lexicographicallyPrecedes($1) }
                let delta = Self.delta(of: &log)
                if delta == nil { mustWriteLog = true }
                let failure = attempt { () throws(PlistFile.Failure) in
                    let old: Data
                    do {
                        old = try PlistValue.dictionary(before).encoded(as: format)
                    } catch {
                        throw PlistFile.Failure("cannot encode the file as it was: \(PlistError.reason(error))")
                    }
                    let number = try PlistHistory.keep(old, changed: paths, by: SettingsProvenance(origin: .changedOnDisk, date: now),
                                                       for: target, limits: limits, provenance: delta, known: &generations)
                    if let number { log.through = number }
                }
                if let failure {
                    mustWriteLog = true  // the entries did not travel in a generation
                    if refusesUnkeptDiscard {
                        // The file holds values no generation does: refuse to discard them.
                        let discarded = edit.changed.filter { key in
                            seen.keys.contains { $0.starts(with: key) || key.starts(with: $0) }
                                && SettingsProvenanceLog.value(at: key, in: before) != nil
                        }
                        if let first = discarded.first {
                            let more = discarded.count > 1 ? " (and \(discarded.count - 1) more)" : ""
                            throw SettingsFileTransaction.Failure(.refused, target, "not changed: it would discard the file's value of '\(PlistHistory.keyPath(first))'\(more), which no generation of its history holds, and keeping one failed (\(failure))")
                        }
                    }
                }
            }
        }
        seen = [:]
        // The generation names one writer: the one noted for every changed key when they all
        // share it (a sync, a migration, a restore), else the edit's writer.
        let origins = edit.changed.map { edit.writers[$0] }
        let writer: SettingsProvenance
        if let first = origins.first ?? nil, origins.allSatisfy({ $0?.origin == first.origin && $0?.device == first.device }) {
            writer = first
        } else {
            writer = edit.writer
        }
        var listed = Set<[String]>()
        let changedOnce = edit.changed.filter { listed.insert($0).inserted }  // a key written twice is one change
        var plain: [[String]] = []
        for key in changedOnce {
            if let noted = edit.writers[key] {
                log.record([key], in: edit.contents, by: noted)
            } else {
                plain.append(key)
            }
        }
        log.record(plain, in: edit.contents, by: edit.writer)
        // Along the paths that changed since the log was last pruned to the file this writer
        // knew, and this change's: no other entry can have lost its leaf.
        var along = before != nil && (beforeIsKnown || previous != nil) ? pruneAlong.map { $0 + changedOnce } : nil
        if let paths = along, paths.count > Self.largestTargetedPrune { along = nil }
        log.prune(to: edit.contents, onlyAlong: along)
        pruneAlong = []
        // The entries travel in the generation: one small file beside the settings file's own
        // replace. The log's own file is written whole only now and then.
        let delta = Self.delta(of: &log)
        if delta == nil { mustWriteLog = true }
        // Whether the log's file is written whole after the new generation, decided as it is
        // kept (its record says so), from its number and the oldest generation kept with it:
        // - zero or below: the numbers started again at or under the log's mark (the generations
        //   were removed, or the journal cut short, behind its back), and readers, who replay the
        //   generations after the mark, would skip the new one's entries;
        // - the oldest kept after the mark's next: a generation whose entries the file does not
        //   hold yet would go;
        // - a number at or below the newest this writer applied: those generations are gone;
        // - otherwise once per fold interval. Only this last one (routine) keeps the file's lineage.
        var routine = false
        var writesLog = true
        let savedThrough = log.savedThrough
        let caughtUpThrough = log.through
        let interval = min(Self.foldInterval, limits.count)
        let kept = attempt { () throws(PlistFile.Failure) in
            recorded.generation = try PlistHistory.keep(
                bytes, changed: changedOnce, by: writer, for: target, limits: limits, provenance: delta, pending: true,
                known: &generations
            ) { number, oldest in
                let unfolded = number - savedThrough
                // A number at or below the newest this log holds: generations it applied are
                // gone (the journal cut or removed behind the writers' backs), so it is not theirs.
                routine = !mustWriteLog && unfolded > 0 && oldest <= savedThrough + 1 && number > caughtUpThrough
                writesLog = !routine || unfolded >= interval
                return writesLog
            }
            if let number = recorded.generation { log.through = number }
        }
        if kept != nil || recorded.generation == nil {
            mustWriteLog = true
            routine = false
            writesLog = true
        }
        if routine && carriedBefore { log.noteCarried() }
        if writesLog {
            var written: PlistFile.Identity?
            _ = attempt { () throws(PlistFile.Failure) in
                // Encodes only the entries changed since the last save or load.
                written = try log.save(for: target, keepingEncoding: true, keepingLineage: routine)
            }
            logIdentity = written ?? (try? PlistFile.identity(of: SettingsProvenanceLog.path(for: target)))
        }
        self.log = log
        return recorded
    }

    /// The entries a generation carries (``SettingsProvenanceLog/takeDelta()``), or `nil` when
    /// the log must be written whole instead: changed as a whole, or a change larger than
    /// ``largestDelta`` (the log's own bounds apply only where it is written whole).
    private static func delta(of log: inout SettingsProvenanceLog) -> PlistDictionary? {
        guard let entries = log.takeDelta(), entries.count <= largestDelta else { return nil }
        return entries
    }

    /// Confirms the generation ``record(_:format:edit:before:previous:beforeIsKnown:target:)``
    /// kept, once the file is replaced (still under its lock): until then it is pending, and a
    /// writer killed before its replace leaves no generation of a change that never happened.
    ///
    /// - Returns: why it could not be confirmed (the change is made; its generation is then
    ///   cut off by the next writer), or `nil`.
    package mutating func confirm(for target: String) -> String? {
        do {
            try PlistHistory.confirm(for: target, known: &generations)
            return nil
        } catch {
            return "its history could not be kept (\(error))"
        }
    }

    /// Removes the generation recorded for a change that then did not happen (the file could
    /// not be replaced): history holds only changes that happened.
    package mutating func discard(_ number: Int, for target: String) {
        PlistHistory.discard(number, for: target, known: &generations)
        // The log holds the change's entries, which no generation carries now: read again, as
        // a reader reads it (a failed replace is rare; the whole read is its cost).
        log = nil
        logIdentity = nil
        pruneAlong = nil
        _ = currentLog(for: target)
    }
}
