#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles
import Synchronization

/// Where a store's layers came from, for ``SettingsStore/explain(_:)`` and the `layers.plist`
/// manifest: the files and registrations in order, which argument or environment variable set
/// each volatile key, and the keys renamed. Kept in the store's locked state; nothing on the
/// read path looks at it.
struct LayerSources: Sendable {
    /// One registration of defaults or overrides: the file it came from (`nil`: code) and its values.
    struct Registration: Sendable {
        var path: String?
        var values: PlistDictionary
    }

    /// Defaults registrations, in order (a later one wins).
    var defaults: [Registration] = []
    /// What registered `Settings.bundle` panes say of each key (titles, groups, order).
    var bundleTexts: [SettingsKey: SettingsBundleReader.BundleText] = [:]
    /// Override registrations, in order (a later one wins).
    var overrides: [Registration] = []
    /// The argument or environment variable that set each volatile key.
    var volatile: [SettingsKey: String] = [:]
    /// The environment prefix read, if any.
    var environmentPrefix: String?
    /// Renamed keys, in the order declared: the key now and its old names.
    var renames: [(key: SettingsKey, formerly: [SettingsKey])] = []
    /// The old names already reported in each layer (one deprecation diagnostic each).
    var reportedOldNames: Set<String> = []
    /// Old names this store moved out of the user layer: moved once. A value given to one
    /// again afterwards (an older program, or a program whose rename goes the other way) is
    /// left where it is, so two programs never move a value back and forth.
    var movedOldNames: Set<SettingsKey> = []

    /// Records the environment prefix read; `false` when it was known already.
    mutating func recordEnvironmentPrefix(_ prefix: String) -> Bool {
        guard environmentPrefix != prefix else { return false }
        environmentPrefix = prefix
        return true
    }

    /// The earlier names of `key`.
    func formerNames(of key: SettingsKey) -> [SettingsKey] {
        renames.first { $0.key == key }?.formerly ?? []
    }

    /// Records a rename, refusing each old name that conflicts with a rename already declared:
    /// an old name of another key (two settings cannot both take its value), a key that is itself
    /// a renamed setting's current name, or a key that is another setting's old name (either
    /// would make the two renames move the value back and forth).
    ///
    /// - Returns: whether anything was added, and one message per refused old name.
    mutating func addRename(_ key: SettingsKey, formerly: [SettingsKey]) -> (added: Bool, conflicts: [String]) {
        var conflicts: [String] = []
        if let other = renames.first(where: { $0.key != key && $0.formerly.contains(key) }) {
            let names = formerly.map { "'\($0.path)'" }.joined(separator: ", ")
            return (false, ["'\(key.path)' is declared with the old names \(names), but '\(key.path)' is itself an old name of '\(other.key.path)': the two renames would move the value back and forth; the old names of '\(key.path)' are ignored"])
        }
        var accepted: [SettingsKey] = []
        for old in formerly where !accepted.contains(old) {
            if let other = renames.first(where: { $0.key != key && $0.formerly.contains(old) }) {
                conflicts.append("'\(old.path)' is declared as the old name of both '\(other.key.path)' and '\(key.path)'; its value goes to '\(other.key.path)' only (declared first)")
            } else if let other = renames.first(where: { $0.key == old }) {
                conflicts.append("'\(key.path)' declares '\(old.path)' as its old name, but '\(old.path)' is itself a setting renamed from \(other.formerly.map { "'\($0.path)'" }.joined(separator: ", ")): the two renames would move the value back and forth; '\(old.path)' is not treated as an old name of '\(key.path)'")
            } else {
                accepted.append(old)
            }
        }
        guard !accepted.isEmpty else { return (false, conflicts) }
        guard let index = renames.firstIndex(where: { $0.key == key }) else {
            renames.append((key, accepted))
            return (true, conflicts)
        }
        let added = accepted.filter { !renames[index].formerly.contains($0) }
        renames[index].formerly += added
        return (!added.isEmpty, conflicts)
    }

    /// What a tool needs to see the same layers (file stores write it beside their file).
    var manifest: PlistLayersManifest {
        var manifest = PlistLayersManifest()
        manifest.defaultsFiles = defaults.compactMap(\.path)
        manifest.overrideFiles = overrides.compactMap(\.path)
        manifest.renames = renames.map { .init(key: $0.key.path, formerly: $0.formerly.map(\.path)) }
        manifest.environmentPrefix = environmentPrefix
        return manifest
    }
}

extension [LayerSources.Registration] {
    /// Appends a registration, keeping the list as short as the order allows: a file registered
    /// again replaces its earlier entry, and registrations from code one after the other are one
    /// entry. So a program that registers the same defaults again and again keeps one copy.
    mutating func record(_ values: PlistDictionary, path: String?) {
        if let path { removeAll { $0.path == path } }
        append(LayerSources.Registration(path: path, values: values))
        // Neighbouring registrations from code are one (at most one more entry than files).
        var merged: [LayerSources.Registration] = []
        for registration in self {
            if registration.path == nil, let last = merged.last, last.path == nil {
                merged[merged.count - 1].values = registration.values.merged(over: last.values)
            } else {
                merged.append(registration)
            }
        }
        self = merged
    }
}

/// A key found under an old name in a layer, and moved to its new name.
struct RenamedKeyMove: Sendable {
    var old: SettingsKey
    var new: SettingsKey
    var layer: SettingsLayer
    /// The argument or environment variable that gave it (volatile layer), if known.
    var source: String?
    /// Whether this is the first time the old name was met in this layer (reported then only).
    var firstTime: Bool
    /// What became of it.
    var outcome: Outcome = .moved

    enum Outcome: Sendable {
        /// Moved to the new name.
        case moved
        /// Not moved: the new name's place holds another value that the move would have replaced.
        case blocked
        /// Not moved: this store moved the old name once already, and it was given a value again.
        case leftAlone
    }
}

extension PlistDictionary {
    /// Whether a value can be set at `path` without replacing another once the value at
    /// `removed` is gone: every dictionary on the way is missing or a dictionary, and the place
    /// itself is empty (or, when `overwriting`, holds anything but a dictionary with keys of its
    /// own). The removed value's place, and everything under it, counts as free.
    func canHold(_ path: [String], overwriting: Bool, onceRemoved removed: [String]) -> Bool {
        var current = self
        for (index, component) in path.enumerated() {
            if index == removed.count - 1, path[...index].elementsEqual(removed) { return true }
            guard let value = current[component] else { return true }
            if index == path.count - 1 {
                guard overwriting else { return false }
                if case .dictionary(let namespace) = value { return namespace.isEmpty }
                return true
            }
            guard case .dictionary(let child) = value else { return false }
            current = child
        }
        return true
    }
}

extension SettingsStore.State {
    /// Moves every value found under an old name in `layer` to its new name, when the new name
    /// has no value there or `overwriting` (the layer was just given the old name's value: an
    /// argument, a file or a registration, which wins as the latest does). The first old name
    /// present wins; the others are left as they are, so nothing is dropped. In the user layer both keys are marked changed, so the next save
    /// writes the new key and removes the old one in one atomic file replacement: a crash leaves
    /// either the old file or the new one, never neither.
    mutating func moveRenamedKeys(in layer: SettingsLayer, overwriting: Bool, store: SettingsStore) -> [RenamedKeyMove] {
        guard !sources.renames.isEmpty else { return [] }
        var moves: [RenamedKeyMove] = []
        for (key, formerly) in sources.renames where overwriting || self[layer].value(at: key.components) == nil {
            var found: (old: SettingsKey, value: PlistValue)?  // the first old name present, and its value
            for old in formerly {
                guard let value = self[layer].value(at: old.components) else { continue }
                found = (old, value)
                break
            }
            guard let (old, value) = found else { continue }
            if layer == .user, sources.movedOldNames.contains(old) {
                // Given a value again after this store moved it: left alone (reported once).
                let first = sources.reportedOldNames.insert("again\u{0}" + old.path).inserted
                moves.append(RenamedKeyMove(old: old, new: key, layer: layer, firstTime: first, outcome: .leftAlone))
                continue
            }
            // The old name is removed first, then the new one set: the new key may lie under the
            // old one (`proxy` -> `proxy/host`) or the old under the new. Checked before anything
            // changes, then done in place.
            guard self[layer].canHold(key.components, overwriting: overwriting, onceRemoved: old.components) else {
                let first = sources.reportedOldNames.insert("blocked\u{0}" + layer.name + "\u{0}" + old.path).inserted
                moves.append(RenamedKeyMove(old: old, new: key, layer: layer, firstTime: first, outcome: .blocked))
                continue
            }
            modify(layer) { dict in
                _ = dict.setValue(nil, at: old.components[...])
                _ = dict.setValue(value, at: key.components[...])
            }
            if layer == .user {
                markDirtyKeepingAlive(key, store: store)
                markDirtyKeepingAlive(old, store: store)
                sources.movedOldNames.insert(old)
                unsaved.renameRemovals[old] = value
            }
            var source: String?
            if layer == .volatile, let given = sources.volatile.removeValue(forKey: old) {
                source = given
                sources.volatile[key] = given
            }
            let first = sources.reportedOldNames.insert(layer.name + "\u{0}" + old.path).inserted
            moves.append(RenamedKeyMove(old: old, new: key, layer: layer, source: source, firstTime: first))
        }
        return moves
    }

    /// Whether `layer` holds a value under an old name whose new name it lacks (or, when
    /// `overwriting`, whether it holds one at all).
    func hasRenamedKeys(in layer: SettingsLayer, overwriting: Bool) -> Bool {
        sources.renames.contains { key, formerly in
            (overwriting || self[layer].value(at: key.components) == nil) && formerly.contains { self[layer].value(at: $0.components) != nil }
        }
    }
}

nonisolated extension SettingsStore {
    /// Declares that `key` was called `formerly` before: when `key` has no value, the first old
    /// name present is read instead, and the move is made for good.
    ///
    /// `@Setting("Network/timeout", formerly: ["timeout"], default: 30)` calls this for you (as
    /// do ``SettingsStore/Key`` and `@StoredModel` with `formerly:`); call it yourself for keys
    /// read through `store[...]` only.
    ///
    /// ```swift
    /// store.registerRename(of: "Network/timeout", formerly: ["timeout", "NetTimeout"])
    /// store["Network/timeout"]      // the value stored under "timeout" by an older version
    /// ```
    ///
    /// What happens in each layer:
    /// - **the user's file**: the value under the first old name present is moved to `key` (as a
    ///   change with origin ``SettingsChange/Origin/migration``); the next save writes `key` and
    ///   removes the old name in the same atomic file replacement, so a crash leaves one or the
    ///   other, never neither. When `key` already has a value, old names are left alone;
    /// - **arguments, environment variables and override files** under an old name still apply,
    ///   to `key`, with one ``SettingsDiagnostic/Kind/deprecatedKey`` diagnostic per old name;
    /// - **registered defaults** under an old name apply to `key`, silently.
    ///
    /// A file store also records the rename in the `layers.plist` manifest beside its file, so
    /// `settings read App timeout` and `settings explain` know it.
    ///
    /// - Parameters:
    ///   - key: the key path now.
    ///   - formerly: its earlier key paths, the first one looked at first.
    public func registerRename(of key: SettingsKey, formerly: [SettingsKey]) {
        let old = formerly.filter { $0 != key }
        guard !old.isEmpty else { return }
        let (added, conflicts) = values.storage.locked { $0.sources.addRename(key, formerly: old) }
        for conflict in conflicts { report(SettingsDiagnostic(.renameConflict, key: key, conflict)) }
        guard added else { return }
        layersManifestChanged()
        for layer in [SettingsLayer.volatile, .overrides, .defaults, .user] { moveRenamedKeys(in: layer) }
    }

    /// The earlier names declared for `key` (see ``registerRename(of:formerly:)``).
    ///
    /// - Parameter key: the key path now.
    /// - Returns: its earlier key paths, or none.
    public func formerNames(of key: SettingsKey) -> [SettingsKey] {
        values.storage.locked { $0.sources.formerNames(of: key) }
    }

    /// Moves values under old names in `layer` to their new names and reports the deprecated
    /// names met for the first time. Called when a layer gains values (`overwriting`: the value
    /// just given under the old name wins) and when a rename is declared or the file loads (a
    /// value under the new name wins); a store whose file is not loaded yet is not loaded for it
    /// (its user layer is moved when it loads).
    func moveRenamedKeys(in layer: SettingsLayer, overwriting: Bool = false) {
        guard layer != .user || loaded.load(ordering: .acquiring),
              values.storage.locked({ $0.hasRenamedKeys(in: layer, overwriting: overwriting) }) else { return }
        var moves: [RenamedKeyMove] = []
        // Never loads the file for it: the user layer is moved when the file loads.
        replace(layer, origin: layer == .user ? .migration : SettingsChange.Origin(layer), loadingFile: false) { s in
            moves = s.moveRenamedKeys(in: layer, overwriting: overwriting, store: self)
        }
        if layer == .user {
            // Provenance: the moved keys were set by a migration, not by this program's own write.
            history?.note(moves.filter { $0.outcome == .moved }.flatMap { [$0.new, $0.old] }, as: .migration)
        }
        for move in moves where move.firstTime {
            switch move.outcome {
            case .moved:
                guard move.layer == .volatile || move.layer == .overrides else { continue }
                let given = move.source ?? (move.layer == .volatile ? "a volatile value" : "an override")
                report(SettingsDiagnostic(
                    .deprecatedKey, key: move.new,
                    "\(given) uses '\(move.old.path)', the old name of '\(move.new.path)'; applied to '\(move.new.path)' (use the new name)"))
            case .blocked:
                report(SettingsDiagnostic(
                    .renameConflict, key: move.new,
                    "\(move.layer.name): the value under '\(move.old.path)', the old name of '\(move.new.path)', cannot move there without replacing another value on its path; '\(move.old.path)' is kept as it is"))
            case .leftAlone:
                report(SettingsDiagnostic(
                    .renameConflict, key: move.new,
                    "'\(move.old.path)', the old name of '\(move.new.path)', was given a value again after this program moved it (by an older program, or one whose rename goes the other way); it is left as it is"))
            }
        }
    }
}
