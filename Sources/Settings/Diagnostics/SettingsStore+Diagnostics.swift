#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import Synchronization

nonisolated extension SettingsStore {
    /// Receives this store's diagnostics (a malformed or unusable file, a failed autosave, a
    /// stored value of the wrong type); `nil`, the default, sends them to the process-wide
    /// ``SettingsDiagnostics/handler``. It is called with no lock held, so it may read and write
    /// the store.
    ///
    /// ```swift
    /// store.diagnosticsHandler = { diagnostic in logger.warning("\(diagnostic.message)") }
    /// ```
    public var diagnosticsHandler: (@Sendable (SettingsDiagnostic) -> Void)? {
        get { diagnosticsHandlerBox.locked { $0.call } }
        set { diagnosticsHandlerBox.locked { $0 = DiagnosticsHandlerSlot(call: newValue) } }
    }

    /// Sends `diagnostic` to this store's handler, or the process-wide one (never call it with a
    /// lock held). A type mismatch is sent once per stored value: reading the same mismatched
    /// value again (another setting of the key, a reload that did not change it) says nothing
    /// new; a new value at the key is reported again.
    @usableFromInline func report(_ diagnostic: SettingsDiagnostic) {
        if diagnostic.kind == .typeMismatch, let key = diagnostic.key {
            let stored = withState { $0.resolve(key)?.value }
            let isNew = reportedMismatches.locked { reported -> Bool in
                let record = ReportedMismatch(message: diagnostic.message, value: stored)
                guard reported[key] != record else { return false }
                reported[key] = record
                return true
            }
            guard isNew else { return }
        }
        if let handler = diagnosticsHandlerBox.locked({ $0.call }) {
            handler(diagnostic)
        } else {
            SettingsDiagnostics.report(diagnostic)
        }
    }
}

/// The type mismatch last reported for a key: the message and the value it was about.
struct ReportedMismatch: Equatable, Sendable {
    let message: String
    let value: PlistValue?
}

/// A store's diagnostics handler, held in a struct so reading it never re-abstracts (and wraps)
/// the stored function (see ``SettingsStore/diagnosticsHandlerBox``).
struct DiagnosticsHandlerSlot: Sendable {
    let call: (@Sendable (SettingsDiagnostic) -> Void)?
}
