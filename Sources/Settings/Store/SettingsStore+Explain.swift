#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
public import SettingsFiles


nonisolated extension SettingsStore {
    /// Explains where the value of `key` comes from: each layer's value, top to bottom, with its
    /// source (the argument or environment variable, the override file, the user's file, the
    /// defaults file or code), which one wins, the key's earlier names, and for a missing key why.
    ///
    /// ```swift
    /// // myapp -Network/timeout 5
    /// print(store.explain("Network/timeout"))
    /// // Network/timeout = 5 (from volatile: command-line argument -Network/timeout)
    /// // * volatile   command-line argument -Network/timeout: 5
    /// //   overrides  /etc/myapp/overrides.plist: not set
    /// //   user       /home/ada/.config/myapp/settings.plist: 60
    /// //   defaults   Defaults.plist: 30
    /// ```
    ///
    /// Reading the explanation takes the store's lock once; it changes nothing.
    ///
    /// - Parameter key: the key path.
    /// - Returns: the explanation.
    public func explain(_ key: SettingsKey) -> SettingsExplanation {
        let userSource = url?.path ?? "in memory"
        let provenanceNote = provenance(of: key)?.summary  // before the lock: it takes it itself
        return withState { s in
            let formerly = s.sources.formerNames(of: key)
            let volatileValue = s[.volatile].value(at: key.components)
            var rows = s.system.rows(for: key.components, locks: true)  // hook (locks)
            rows += [SettingsExplanation.Row(
                layer: "volatile",
                source: s.sources.volatile[key] ?? (volatileValue == nil ? volatileSourcesText(s.sources) : "set in code"),
                value: volatileValue)]
            rows += Self.rows(layer: "overrides", s.sources.overrides, key: key, formerly: formerly, layerValue: s[.overrides].value(at: key.components))
            let userValue = s[.user].value(at: key.components)
            rows.append(SettingsExplanation.Row(
                layer: "user", source: userSource, value: userValue,
                notes: userValue == nil ? [] : provenanceNote.map { [$0] } ?? []))
            rows += s.system.rows(for: key.components, locks: false)  // hook (system defaults)
            rows += Self.rows(layer: "defaults", s.sources.defaults, key: key, formerly: formerly, layerValue: s[.defaults].value(at: key.components))
            let missing = rows.contains { $0.value != nil } ? nil : s.explainMissing(key)
            return SettingsExplanation(key: key.path, rows: rows, formerly: formerly.map(\.path), missingReason: missing)
        }
    }

    /// What can set a volatile value here, for a row that has none.
    private func volatileSourcesText(_ sources: LayerSources) -> String {
        sources.environmentPrefix.map { "command line, environment (\($0)_...)" } ?? "command line"
    }

    /// One row per registration that has `key` (under its name or an old one), latest first; one
    /// row saying there is none when none has it. When code changed the layer after its files,
    /// the layer's own value leads.
    private static func rows(
        layer: String, _ registrations: [LayerSources.Registration], key: SettingsKey, formerly: [SettingsKey], layerValue: PlistValue?
    ) -> [SettingsExplanation.Row] {
        var rows: [SettingsExplanation.Row] = []
        for registration in registrations.reversed() {
            if let value = registration.values.value(at: key.components) {
                rows.append(.init(layer: layer, source: registration.path ?? "in code", value: value))
            } else if let (old, value) = formerly.lazy.compactMap({ old in registration.values.value(at: old.components).map { (old, $0) } }).first {
                rows.append(.init(layer: layer, source: registration.path ?? "in code", value: value, notes: ["under its old name '\(old.path)'"]))
            }
        }
        guard !rows.isEmpty else {
            let files = registrations.compactMap(\.path)
            return [.init(layer: layer, source: files.isEmpty ? "none registered" : files.reversed().joined(separator: ", "), value: layerValue)]
        }
        // A dictionary merges with the registrations below it: the layer's merged value wins.
        if let layerValue, rows[0].value != layerValue { rows[0].value = layerValue }
        return rows
    }

    // MARK: The layers manifest

    /// Records a defaults or overrides registration (its file, or code when `path` is `nil`),
    /// moves values under old names to their new ones, and updates the manifest.
    func recordRegistration(_ layer: SettingsLayer, _ registered: PlistDictionary, path: String?) {
        values.storage.locked { s in
            if layer == .overrides {
                s.sources.overrides.record(registered, path: path)
            } else {
                s.sources.defaults.record(registered, path: path)
            }
        }
        if path != nil { layersManifestChanged() }
        moveRenamedKeys(in: layer, overwriting: true)
    }

    /// Writes the `layers.plist` manifest beside a file store's file soon, on the store's own
    /// thread (never on the caller's: registering a file or a rename does no file work itself).
    func layersManifestChanged() {
        backend?.executor.schedule(after: .zero) { [weak self] in self?.writeLayersManifest() }
    }

    /// Writes the manifest when it differs from the one on disk; a failure is a diagnostic
    /// (on the store's executor). It records the store's history limits when they are not the
    /// defaults, so the `settings` tool keeps the history the program asked for; a store with
    /// nothing to say (no files, renames, prefix, and the default limits) writes none where there
    /// is none.
    func writeLayersManifest() {
        guard let url else { return }
        var manifest = values.storage.locked { $0.sources.manifest }
        if let options = persistence {
            let defaults = PlistHistory.Limits()
            if options.historyLimit != defaults.count { manifest.historyLimit = options.historyLimit }
            if options.historyByteBudget != defaults.bytes { manifest.historyByteBudget = options.historyByteBudget }
        }
        do {
            let target = try PlistFile.target(of: url.path).path
            let onDisk = try? PlistLayersManifest.read(beside: target)
            guard onDisk != manifest, onDisk != nil || manifest != PlistLayersManifest() else { return }
            // A first run: the file's directory does not exist yet. It is made as the first save
            // makes it (owner-only), so `settings explain` sees every layer from the first run on.
            try SettingsFile.createDirectory(of: target)
            try manifest.write(beside: target)
        } catch let error as SettingsError {
            report(SettingsDiagnostic(.fileError, "\(url.path): cannot write \(PlistLayersManifest.fileName) beside it: \(error.detail ?? error.description)"))
        } catch {
            report(SettingsDiagnostic(.fileError, "\(url.path): cannot write \(PlistLayersManifest.fileName) beside it: \(error)"))
        }
    }
}
