#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles
import Synchronization

/// Who last set each key of a store's file and the key paths with an origin other than this
/// process's own write, shared by the store (which reads it without waiting for the disk) and its
/// ``SettingsFile`` (which records it at each save, on the store's persistence thread).
///
/// The `@Setting` read and write paths never touch it: only the rare writers with another origin
/// (sync, restore) add notes, and saves and reloads publish the log.
final class StoreHistory: Sendable {
    struct State {
        /// Origins other than ``PlistProvenance/Origin/write`` for key paths not yet saved.
        var notes: [[String]: PlistProvenance] = [:]
        /// The provenance log as of the last save or reload, and the file's contents then.
        var log = PlistProvenanceLog()
        var contents = PlistDictionary()
        var fileDate = Date(timeIntervalSince1970: 0)
    }

    let state = Mutex(State())

    /// Records that `keys` were set by `origin` (kept until the save that writes them).
    func note(_ keys: [SettingsKey], as origin: PlistProvenance.Origin, device: String? = nil) {
        guard !keys.isEmpty else { return }
        let writer = PlistProvenance.thisProcess(origin, device: device)
        state.locked { s in for key in keys { s.notes[key.components] = writer } }
    }

    /// Takes the notes for a save.
    func takeNotes() -> [[String]: PlistProvenance] {
        state.locked { s in
            defer { s.notes = [:] }
            return s.notes
        }
    }

    /// Gives back notes taken for a save that failed (a note made since wins).
    func restore(notes: [[String]: PlistProvenance]) {
        guard !notes.isEmpty else { return }
        state.locked { s in s.notes.merge(notes) { current, _ in current } }
    }

    /// Makes `log` and `contents` what ``SettingsStore/provenance(of:)`` reads.
    func publish(_ log: PlistProvenanceLog, contents: PlistDictionary, fileDate: Date) {
        state.locked { s in
            s.log = log
            s.contents = contents
            s.fileDate = fileDate
        }
    }
}

extension PlistProvenance.Origin {
    /// The provenance of a change announced with `origin`, when a note is worth keeping (writes
    /// are recorded as this process's writes without one).
    init?(_ origin: SettingsChange.Origin) {
        switch origin {
        case .sync: self = .sync
        case .migration: self = .migration
        default: return nil
        }
    }
}

extension SettingsFile {
    /// The state of the file's history and provenance, kept with the file on the store's executor.
    struct HistoryState {
        /// The provenance log as last read or written, and the identity of its file then.
        var log: PlistProvenanceLog?
        var logIdentity: PlistFile.Identity?
        /// The generations directory as this process last listed or changed it, so a save lists
        /// it only when another writer changed it.
        var generations = PlistHistory.Known()
        /// Leaves found changed on disk by a reload, and when: recorded at the next save.
        var seen: [[String]: Date] = [:]
        /// Whether a failure to keep history was reported (once, until it works again).
        var failureReported = false
        /// Whether the file as loaded was checked against the log (at the first save: values set
        /// by hand, or by an older library, while this process did not run), and when it was loaded.
        var verified = false
        var loadedAt = Date()
    }

    /// The log beside `target`, read again only when its file changed since this process last
    /// read or wrote it.
    mutating func currentLog(for target: String) -> PlistProvenanceLog {
        let path = PlistProvenanceLog.path(for: target)
        let identity = try? PlistFile.identity(of: path)
        if let log = historyState.log, identity == historyState.logIdentity { return log }
        let log = (try? PlistProvenanceLog.load(for: target, keepingEncoding: true, updating: historyState.log)) ?? PlistProvenanceLog()
        historyState.log = log
        historyState.logIdentity = identity
        return log
    }

    /// At a save, before the file is replaced (so a process that reloads the new file finds its
    /// provenance already there): records leaves others changed without recording it (a hand
    /// edit: the file as it was is kept as a generation of its own), keeps the new bytes as a
    /// generation, and records this process (or the origin noted) as the setter of `changed`.
    /// Entries are checked against their value's digest, so an entry written for a save that a
    /// crash then stopped never describes the value left in the file.
    ///
    /// Failures to keep history never stop the save: they are reported once.
    ///
    /// - Returns: the number of the generation kept for `bytes`, for ``discardGeneration(_:)``
    ///   when the file then cannot be replaced (`nil`: none kept).
    mutating func prepareSave(bytes: Data, base: PlistDictionary?, reread: Bool, merged: PlistDictionary,
                              changed: [SettingsKey], notes: [[String]: PlistProvenance], target: String) -> Int? {
        var log = currentLog(for: target)
        let limits = PlistHistory.Limits(count: options.historyLimit, bytes: options.historyByteBudget)
        var generations = historyState.generations  // what this process knows of the generations directory
        defer { historyState.generations = generations }
        var unrecorded = false
        if let base {
            let now = Date()
            if !historyState.verified {
                historyState.verified = true
                for path in log.unrecordedLeaves(in: base) where historyState.seen[path] == nil {
                    historyState.seen[path] = historyState.loadedAt
                }
            }
            if reread {
                for key in PlistProvenanceLog.changedLeaves(from: contents, to: base) where historyState.seen[key] == nil {
                    historyState.seen[key] = now
                }
            }
            for (path, date) in historyState.seen {
                unrecorded = log.noteUnrecorded([path], in: base, seenAt: date) || unrecorded
            }
            if unrecorded, limits.count > 0, let old = try? PlistValue.dictionary(base).encoded(as: format) {
                let seen = historyState.seen.keys.sorted { $0.lexicographicallyPrecedes($1) }
                keepGeneration { () throws(PlistFile.Failure) in
                    try PlistHistory.keep(old, changed: seen, by: PlistProvenance(origin: .changedOnDisk, date: now), for: target,
                                          limits: limits, known: &generations)
                }
            }
        }
        historyState.seen = [:]
        let me = PlistProvenance.thisProcess(.write)
        // The generation names one writer: the origin noted for every changed key when they all
        // share it (a sync, a migration, a restore), else this process.
        let origins = changed.map { notes[$0.components] }
        let writer: PlistProvenance
        if let first = origins.first ?? nil, origins.allSatisfy({ $0?.origin == first.origin && $0?.device == first.device }) {
            writer = first
        } else {
            writer = me
        }
        var kept: Int?
        var listed = Set<[String]>()
        let changedOnce = changed.map(\.components).filter { listed.insert($0).inserted }  // a key written twice is one change
        keepGeneration { () throws(PlistFile.Failure) in
            kept = try PlistHistory.keep(bytes, changed: changedOnce, by: writer, for: target, limits: limits,
                                         known: &generations)
        }
        var plain: [[String]] = []
        for key in changed {
            if let noted = notes[key.components] {
                log.record([key.components], in: merged, by: noted)
            } else {
                plain.append(key.components)
            }
        }
        log.record(plain, in: merged, by: me)
        log.prune(to: merged)
        var written: PlistFile.Identity?
        keepGeneration { () throws(PlistFile.Failure) in
            written = try log.save(for: target, keepingEncoding: true)  // encodes only the entries changed since the last save or load
        }
        historyState.log = log
        historyState.logIdentity = written ?? (try? PlistFile.identity(of: PlistProvenanceLog.path(for: target)))
        return kept
    }

    /// Removes the generation a save kept when the file then could not be replaced: history
    /// holds only saves that happened (a save that fails again and again keeps nothing).
    mutating func discardGeneration(_ number: Int, for target: String) {
        PlistHistory.discard(number, for: target, known: &historyState.generations)
    }

    /// After the file was replaced: publishes the log for ``SettingsStore/provenance(of:)``.
    func finishSave(merged: PlistDictionary) {
        history?.publish(historyState.log ?? PlistProvenanceLog(), contents: merged, fileDate: Date())
    }

    /// At a reload: leaves changed by others are noted as seen now (recorded at the next save
    /// unless their writer recorded them), and the log is published.
    mutating func noteReload(old: PlistDictionary, new: PlistDictionary, target: String) {
        var log = currentLog(for: target)
        let now = Date()
        for key in PlistProvenanceLog.changedLeaves(from: old, to: new) where historyState.seen[key] == nil {
            historyState.seen[key] = now
        }
        for (path, date) in historyState.seen { log.noteUnrecorded([path], in: new, seenAt: date) }
        history?.publish(log, contents: new, fileDate: now)
    }

    /// At the first load: publishes the log as it is on disk.
    mutating func noteLoad(target: String, fileDate: Date) {
        historyState.loadedAt = Date()
        history?.publish(currentLog(for: target), contents: contents, fileDate: fileDate)
    }

    /// Runs one step of keeping history; a failure is reported once (until one works), never thrown.
    private mutating func keepGeneration(_ body: () throws(PlistFile.Failure) -> Void) {
        do {
            try body()
            historyState.failureReported = false
        } catch {
            guard !historyState.failureReported else { return }
            historyState.failureReported = true
            diagnostics.append(SettingsDiagnostic(.fileError, "\(path): its history or provenance could not be kept (\(error)); the settings themselves are saved"))
        }
    }
}
