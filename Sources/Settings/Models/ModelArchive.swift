import SettingsPlist

/// Turns stored dictionaries into models and models into stored dictionaries without losing
/// data: migrations first, defaults for missing fields, and on the way back the stored values of
/// keys the model does not know and of fields that did not decode (unless the program changed
/// them since).
struct ModelArchive<Model: SettingsModel>: Sendable {
    /// What loading learnt, needed to save without loss.
    struct Memory: Sendable {
        /// The model as it was loaded: archived again (only when a save needs it), it gives the
        /// keys the model knows, optional fields that were present included.
        var loaded: Model?
        /// Fields that did not decode, with the default they got.
        var failed: [[String]: PlistValue] = [:]
    }

    /// Decodes a stored dictionary.
    ///
    /// - Parameters:
    ///   - stored: the stored dictionary (with its `$version`).
    ///   - source: the file or store key, for messages.
    /// - Returns: the model, what to remember for saving, and the issues (already reported).
    static func load(_ stored: PlistDictionary, source: String) throws(SettingsError) -> (Model, Memory) {
        var dictionary = stored
        let version = try Model.migrations.migrate(&dictionary, source: source)
        if version > Model.migrations.version {
            SettingsDiagnostics.report(SettingsDiagnostic(.fileError, "\(source): written by schema version \(version), newer than this program's \(Model.migrations.version); fields it does not know are kept"))
        }
        var issues: [ModelFieldIssue] = []
        let model = Model.unarchive(dictionary, issues: &issues)
        var memory = Memory(loaded: model)
        let defaults = (try? Model().archive()) ?? PlistDictionary()
        for issue in issues {
            let path = issue.field.split(separator: ".").map(String.init)
            if let fallback = defaults.value(at: path) { memory.failed[path] = fallback }
            SettingsDiagnostics.report(SettingsDiagnostic(
                .typeMismatch, "\(source): \(issue); using the default, and the stored value is kept"))
        }
        return (model, memory)
    }

    /// The dictionary to store for `model`, given what is stored now (`existing`).
    ///
    /// - Parameters:
    ///   - model: the model.
    ///   - existing: what is stored now, if anything (already migrated or not: its version key
    ///     is ignored).
    ///   - memory: what loading learnt, if the model was loaded from there.
    static func save(_ model: Model, over existing: PlistDictionary?, memory: Memory?) throws(SettingsError) -> PlistDictionary {
        var out = try model.archive()
        if var existing {
            // Compare with what is stored as the model sees it: renamed keys are not unknown keys.
            if Model.migrations.version > 0 || existing[SettingsMigrations.versionKey] != nil,
               (try? Model.migrations.migrate(&existing, source: "")) == nil {
                existing = PlistDictionary()
            }
            if hasKeysMissing(from: out, in: existing) {
                let defaults = (try? Model().archive()) ?? PlistDictionary()
                let loaded = (try? memory?.loaded?.archive()) ?? PlistDictionary()
                keepUnknown(&out, existing: existing, known: [defaults, loaded])
            }
            for (path, fallback) in memory?.failed ?? [:] where out.value(at: path) == fallback {
                if let stored = existing.value(at: path) { _ = out.setValue(stored, at: path[...]) }
            }
        }
        out[SettingsMigrations.versionKey] = nil
        if Model.migrations.version > 0 {
            out[SettingsMigrations.versionKey] = .integer(PlistInteger(Int64(Model.migrations.version)))
        }
        return out
    }

    /// Whether `existing` has a key, at any level where both hold a dictionary, that `out` lacks
    /// (the usual answer, no, saves encoding the defaults on every write).
    private static func hasKeysMissing(from out: PlistDictionary, in existing: PlistDictionary) -> Bool {
        for (key, value) in existing where key != SettingsMigrations.versionKey {
            guard let mine = out[key] else { return true }
            if case .dictionary(let nested) = mine, case .dictionary(let theirs) = value,
               hasKeysMissing(from: nested, in: theirs) {
                return true
            }
        }
        return false
    }

    /// Copies into `out` the entries of `existing` whose keys neither `out` nor any of `known`
    /// has, at every level where both hold a dictionary.
    private static func keepUnknown(_ out: inout PlistDictionary, existing: PlistDictionary, known: [PlistDictionary]) {
        for (key, value) in existing where key != SettingsMigrations.versionKey {
            if let mine = out[key] {
                if case .dictionary(var nested) = mine, case .dictionary(let theirs) = value {
                    keepUnknown(&nested, existing: theirs, known: known.compactMap { $0[key]?.dictionaryValue })
                    out[key] = .dictionary(nested)
                }
            } else if !known.contains(where: { $0[key] != nil }) {
                out[key] = value
            }
        }
    }
}
