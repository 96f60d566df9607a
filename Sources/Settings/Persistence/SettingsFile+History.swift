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
        /// Origins other than ``SettingsProvenance/Origin/write`` for key paths not yet saved.
        var notes: [[String]: SettingsProvenance] = [:]
        /// The provenance log as of the last save or reload, and the file's contents then.
        var log = SettingsProvenanceLog()
        var contents = PlistDictionary()
        var fileDate = Date(timeIntervalSince1970: 0)
    }

    let state = Mutex(State())

    /// Records that `keys` were set by `origin` (kept until the save that writes them).
    func note(_ keys: [SettingsKey], as origin: SettingsProvenance.Origin, device: String? = nil) {
        guard !keys.isEmpty else { return }
        let writer = SettingsProvenance.thisProcess(origin, device: device)
        state.locked { s in for key in keys { s.notes[key.components] = writer } }
    }

    /// Takes the notes for a save.
    func takeNotes() -> [[String]: SettingsProvenance] {
        state.locked { s in
            defer { s.notes = [:] }
            return s.notes
        }
    }

    /// Gives back notes taken for a save that failed (a note made since wins).
    func restore(notes: [[String]: SettingsProvenance]) {
        guard !notes.isEmpty else { return }
        state.locked { s in s.notes.merge(notes) { current, _ in current } }
    }

    /// Makes `log` and `contents` what ``SettingsStore/provenance(of:)`` reads.
    func publish(_ log: SettingsProvenanceLog, contents: PlistDictionary, fileDate: Date) {
        state.locked { s in
            s.log = log
            s.contents = contents
            s.fileDate = fileDate
        }
    }
}

extension SettingsProvenance.Origin {
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
    /// The recorder of the file's history and provenance (``PlistRecorder``), kept between saves.
    static func makeRecorder(_ options: PersistenceOptions) -> PlistRecorder {
        PlistRecorder(limits: PlistHistory.Limits(count: options.historyLimit, bytes: options.historyByteBudget))
    }

    /// Reports a failure to keep history once, until keeping it works again (the settings
    /// themselves are saved).
    mutating func noteHistory(problem: String?) {
        guard let problem else {
            historyFailureReported = false
            return
        }
        guard !historyFailureReported else { return }
        historyFailureReported = true
        diagnostics.append(SettingsDiagnostic(.fileError, "\(path): \(problem); the settings themselves are saved"))
    }

    /// After the file was replaced: publishes the log for ``SettingsStore/provenance(of:)``.
    mutating func finishSave(merged: PlistDictionary) {
        history?.publish(recorder?.publishedLog() ?? SettingsProvenanceLog(), contents: merged, fileDate: Date())
    }

    /// At a reload: leaves changed by others are noted as seen now (recorded at the next save
    /// unless their writer recorded them), and the log is published.
    mutating func noteReload(old: PlistDictionary, new: PlistDictionary, target: String) {
        let log = recorder?.noteReload(old: old, new: new, target: target) ?? SettingsProvenanceLog()
        history?.publish(log, contents: new, fileDate: Date())
    }

    /// At the first load: publishes the log as it is on disk.
    mutating func noteLoad(target: String, fileDate: Date) {
        recorder?.noteFirstSeen()
        _ = recorder?.currentLog(for: target)
        history?.publish(recorder?.publishedLog() ?? SettingsProvenanceLog(), contents: contents, fileDate: fileDate)
    }
}
