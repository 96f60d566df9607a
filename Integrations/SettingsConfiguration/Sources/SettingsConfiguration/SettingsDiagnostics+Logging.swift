#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Logging
public import Settings

extension SettingsDiagnostics {
    /// A diagnostics handler that logs each diagnostic to `logger`, one line, with metadata:
    /// `settings.kind`, `settings.key` (when the diagnostic names one), `settings.layer` (the
    /// layer the key's value comes from now) and `settings.file` (the store's file). A file
    /// problem or a refused write logs at `error`, a type mismatch or a bad override at `warning`, a missing default
    /// or a rule at `notice`. Values of secret keys are never in a diagnostic's message.
    ///
    /// ```swift
    /// SettingsDiagnostics.handler = SettingsDiagnostics.logger(Logger(label: "settings"))
    /// store.diagnosticsHandler = SettingsDiagnostics.logger(logger, for: store)   // or store.logDiagnostics(to: logger)
    /// ```
    ///
    /// - Parameters:
    ///   - logger: where the lines go.
    ///   - store: the store whose file and layers the metadata names (held weakly).
    /// - Returns: the handler.
    public static func logger(_ logger: Logger, for store: SettingsStore? = nil) -> @Sendable (SettingsDiagnostic) -> Void {
        { [weak store] diagnostic in
            var metadata: Logger.Metadata = ["settings.kind": .string(diagnostic.kind.rawValue)]
            if let key = diagnostic.key {
                metadata["settings.key"] = .string(key.path)
                if let layer = store?.source(of: key) { metadata["settings.layer"] = .string(layer.name) }
            }
            if let path = store?.url?.path(percentEncoded: false) { metadata["settings.file"] = .string(path) }
            logger.log(level: diagnostic.kind.logLevel, "\(diagnostic.message)", metadata: metadata)
        }
    }
}

extension SettingsStore {
    /// Sends this store's diagnostics to `logger` (see ``SettingsDiagnostics/logger(_:for:)``).
    ///
    /// ```swift
    /// SettingsStore.shared.logDiagnostics(to: Logger(label: "settings"))
    /// ```
    ///
    /// - Parameter logger: where the lines go.
    public nonisolated func logDiagnostics(to logger: Logger) {
        diagnosticsHandler = SettingsDiagnostics.logger(logger, for: self)
    }
}

extension SettingsDiagnostic.Kind {
    /// The level a diagnostic of this kind is logged at.
    var logLevel: Logger.Level {
        switch self {
        case .fileError, .writeRefused: .error
        case .typeMismatch, .invalidOverride, .deprecatedKey, .renameConflict: .warning
        case .missingDefault, .ruleApplied: .notice
        }
    }
}
