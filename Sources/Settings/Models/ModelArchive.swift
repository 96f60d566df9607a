import SettingsPlist
import SettingsFiles

/// Turns stored dictionaries into models and models into stored dictionaries without losing
/// data: migrations first, defaults for missing fields, and on the way back the stored values of
/// keys the model does not know (at every depth, inside array elements too), of values that did
/// not decode (unless the program changed them since), and a version never lowered.
struct ModelArchive<Model: SettingsModel>: Sendable {
    /// What loading learnt, needed to save without loss.
    struct Memory: Sendable {
        /// The model as it was loaded: archived again (only when a save needs it), it gives the
        /// keys the model knows, optional fields that were present included.
        var loaded: Model?
        /// Values that fell back to a default (or `nil`), by dictionary key path, with what the
        /// loaded model archives there (`nil`: nothing).
        var fallbacks: [(path: [String], loaded: PlistValue?)] = []
        /// The stored positions of array elements left out on load, by the array's location.
        var dropped: [[PlistPathStep]: [Int]] = [:]
        /// Whether the model as a whole did not decode (it is `Model()`).
        var wholeModelFailed = false
        /// For a model file: the file as last read or written by this process, so a save can
        /// skip reading it again while it is unchanged (the store does the same).
        var file: FileState?
    }

    /// A model file as this process last read or wrote it.
    struct FileState: Sendable {
        var identity: PlistFile.Identity
        /// The file held open while remembered (``PlistFile/Held``): without it, the identity
        /// is not trusted and the file is read again at the next save.
        var held: PlistFile.Held?
        /// Its dictionary as stored (before migrations).
        var dictionary: PlistDictionary
        var format: PlistFormat
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
            SettingsDiagnostics.report(SettingsDiagnostic(.fileError, "\(source): written by schema version \(version), newer than this program's \(Model.migrations.version); fields it does not know are kept, and so is its version"))
        }
        var issues: [ModelFieldIssue] = []
        let model = Model.unarchive(dictionary, issues: &issues)
        var memory = Memory(loaded: model)
        guard !issues.isEmpty else { return (model, memory) }
        let archived = try? model.archive()
        for issue in issues {
            let steps = issue.steps
            let what: String
            switch issue.outcome {
            case .droppedElement:
                if case .index(let i)? = steps.last { memory.dropped[Array(steps.dropLast()), default: []].append(i) }
                what = "the element is left out"
            case .droppedEntry:
                what = "the entry is left out"
            case .fellBack:
                var keys: [String] = []
                for step in steps {
                    guard case .key(let key) = step else { break }
                    keys.append(key)
                }
                if steps.isEmpty {
                    memory.wholeModelFailed = true
                } else if keys.count == steps.count {
                    memory.fallbacks.append((keys, archived?.value(at: keys)))
                }
                what = steps.isEmpty ? "using the model's defaults" : "using the default"
            }
            SettingsDiagnostics.report(SettingsDiagnostic(
                .typeMismatch, "\(source): \(issue); \(what), and the stored value is kept"))
        }
        return (model, memory)
    }

    /// The dictionary to store for `model`, given what is stored now (`existing`).
    ///
    /// - Parameters:
    ///   - model: the model.
    ///   - existing: what is stored now, if anything (already migrated or not: its version key
    ///     is ignored, except that the version written is never lower than it).
    ///   - memory: what loading learnt, if the model was loaded from there.
    ///   - source: the file or store key, for messages.
    static func save(_ model: Model, over existing: PlistDictionary?, memory: Memory?, source: String) throws(SettingsError) -> PlistDictionary {
        try saving(model, over: existing, memory: memory, source: source).dictionary
    }

    /// The dictionary to store for `model` (see ``save(_:over:memory:)``), and what to remember
    /// once it is stored: the model as saved, and the values that fell back on load and are
    /// still unchanged (those the program changed are its own now).
    ///
    /// With `changedElsewhere` (another process saved the file since this one last read or
    /// wrote it), the top-level fields this process did not change since then (the model
    /// archives them as ``Memory/loaded`` does) take what is stored now, so this save does not
    /// revert the other process's changes; a field changed on both sides takes this process's
    /// value (the last save wins, field by field).
    static func saving(
        _ model: Model, over existing: PlistDictionary?, memory: Memory?, source: String, changedElsewhere: Bool = false
    ) throws(SettingsError) -> (dictionary: PlistDictionary, memory: Memory?) {
        var out = try model.archive()
        var after = memory
        after?.loaded = model
        var version: PlistValue? = Model.migrations.version > 0 ? .integer(PlistInteger(Int64(Model.migrations.version))) : nil
        if var existing {
            // A newer program's file keeps its version, as stored (even beyond `Int`): lowering
            // it would run its migrations again.
            // A version that cannot be read is not replaced by a guess: nothing is saved.
            if try SettingsMigrations.storedVersion(of: existing, source: source) > Model.migrations.version {
                version = existing[SettingsMigrations.versionKey]
            }
            // Compare with what is stored as the model sees it: renamed keys are not unknown keys.
            // When that fails, what is stored is compared as it is: its keys are kept, not dropped.
            if Model.migrations.version > 0 || existing[SettingsMigrations.versionKey] != nil {
                _ = try? Model.migrations.migrate(&existing, source: "")
            }
            existing[SettingsMigrations.versionKey] = nil
            // The loaded model archived again, only when needed (most saves do not).
            func loadedArchive() -> PlistDictionary? { memory.flatMap { memory in memory.loaded.flatMap { try? $0.archive() } } }
            if memory?.wholeModelFailed == true, loadedArchive() == out {
                out = existing  // nothing decoded and nothing changed: what is stored stays
            } else {
                if changedElsewhere, let loaded = loadedArchive() {
                    let mine = out
                    for key in mine.keys + loaded.keys.filter({ mine[$0] == nil }) where mine[key] == loaded[key] {
                        out[key] = existing[key]  // not changed here since: theirs stays
                    }
                }
                after?.wholeModelFailed = false
                after?.fallbacks = []
                // A value that fell back was never decoded, so the stored one is no structure
                // to lay unknown keys from: it comes back whole while the program has not
                // changed it, and the program's value goes in as it is once it has. Decided
                // before the merge below, which must not mix the two.
                let fallbacks = (memory?.fallbacks ?? []).map { fallback in
                    let mine = out.value(at: fallback.path)
                    return (path: fallback.path, loaded: fallback.loaded, mine: mine, unchanged: mine == fallback.loaded)
                }
                if !(memory?.dropped.isEmpty ?? true) || hasKeysMissing(from: .dictionary(out), in: .dictionary(existing)) {
                    let loaded = loadedArchive()
                    let defaults = try? Model().archive()
                    let merged = merge(
                        .dictionary(out), over: .dictionary(existing), loaded: loaded.map { .dictionary($0) },
                        defaults: defaults.map { .dictionary($0) }, at: [], dropped: memory?.dropped ?? [:])
                    if case .dictionary(let dictionary) = merged { out = dictionary }
                }
                for fallback in fallbacks {
                    if fallback.unchanged {
                        if let stored = existing.value(at: fallback.path) { _ = out.setValue(stored, at: fallback.path[...]) }
                        after?.fallbacks.append((fallback.path, fallback.loaded))
                    } else {
                        _ = out.setValue(fallback.mine, at: fallback.path[...])
                    }
                }
            }
        }
        out[SettingsMigrations.versionKey] = nil
        out[SettingsMigrations.versionKey] = version
        // What is saved must load again: readers refuse nesting beyond their limit, and a store
        // file holding such a model could not be opened at all.
        let limit = PlistReadOptions().maximumDepth
        if Self.nesting(of: .dictionary(out), exceeds: limit) {
            throw SettingsError(.typeMismatch, path: source, detail: "the model nests arrays and dictionaries deeper than \(limit) levels, which no reader accepts; not saved")
        }
        return (out, after)
    }

    /// Whether `value` nests containers more than `limit` deep (the top one is level 1); looks
    /// no deeper than `limit + 1` levels.
    private static func nesting(of value: PlistValue, exceeds limit: Int) -> Bool {
        switch value {
        case .dictionary(let dictionary):
            return limit <= 0 || dictionary.values.contains { nesting(of: $0, exceeds: limit - 1) }
        case .array(let array):
            return limit <= 0 || array.contains { nesting(of: $0, exceeds: limit - 1) }
        default:
            return false
        }
    }

    /// Whether `existing` has a dictionary key that `out` lacks, at any level where both hold a
    /// dictionary or arrays of the same length (the usual answer, no, saves encoding the
    /// defaults on every write).
    private static func hasKeysMissing(from out: PlistValue, in existing: PlistValue) -> Bool {
        switch (out, existing) {
        case (.dictionary(let mine), .dictionary(let theirs)):
            let keys = mine.keys
            for i in theirs.keys.indices {
                let key = theirs.keys[i]
                let nested: PlistValue
                if i < keys.count, keys[i] == key {
                    nested = mine.values[i]  // the usual case: same key at the same place, no lookup
                } else {
                    guard let found = mine[key] else { return true }
                    nested = found
                }
                switch theirs.values[i] {
                case .dictionary, .array:
                    if hasKeysMissing(from: nested, in: theirs.values[i]) { return true }
                default:
                    continue
                }
            }
            return false
        case (.array(let mine), .array(let theirs)) where mine.count == theirs.count:
            for i in mine.indices where hasKeysMissing(from: mine[i], in: theirs[i]) { return true }
            return false
        default:
            return false
        }
    }

    /// `out` laid over `existing`: where both hold a dictionary, the entries of `existing` whose
    /// keys neither `out`, the loaded model nor the defaults have are added (keys the model
    /// knows but left out, like an optional set to `nil`, stay out); where both hold an array of
    /// the same length, element by element (each loaded element with the stored one it agrees
    /// with, see ``storedPartners(of:in:)``); where elements were left out on load and the array
    /// kept its loaded length or was only appended to, the left-out stored elements go back at
    /// their positions (appended ones after them).
    ///
    /// - Parameters:
    ///   - out: what the program archives.
    ///   - existing: what is stored.
    ///   - loaded: what the model archived as loaded, at the same place (aligned with `out`).
    ///   - defaults: what `Model()` archives there (never inside arrays).
    ///   - path: where this is, in stored coordinates.
    ///   - dropped: the stored positions of elements left out on load, by array location.
    private static func merge(
        _ out: PlistValue, over existing: PlistValue, loaded: PlistValue?, defaults: PlistValue?,
        at path: [PlistPathStep], dropped: [[PlistPathStep]: [Int]]
    ) -> PlistValue {
        switch (out, existing) {
        case (.dictionary(var mine), .dictionary(let theirs)):
            let loaded = loaded?.dictionaryValue
            let defaults = defaults?.dictionaryValue
            for (key, value) in theirs {
                if let nested = mine[key] {
                    guard nested.isContainer, value.isContainer else { continue }
                    mine[key] = merge(
                        nested, over: value, loaded: loaded?[key], defaults: defaults?[key],
                        at: path + [.key(key)], dropped: dropped)
                } else if loaded?[key] == nil && defaults?[key] == nil {
                    mine[key] = value
                }
            }
            return .dictionary(mine)
        case (.array(let mine), .array(let theirs)):
            let loaded = loaded?.arrayValue
            let left = (dropped[path] ?? []).sorted()
            if left.isEmpty {
                guard mine.count == theirs.count else { return out }
                let aligned = loaded?.count == theirs.count ? loaded : nil
                let partners = aligned.map { storedPartners(of: $0, in: theirs) } ?? Array(theirs.indices)
                return .array(mine.indices.map { i in
                    guard let j = partners[i], mine[i].isContainer, theirs[j].isContainer else { return mine[i] }
                    return merge(mine[i], over: theirs[j], loaded: aligned?[i], defaults: nil, at: path + [.index(j)], dropped: dropped)
                })
            }
            // Elements were left out on load: they go back only where positions still match:
            // the array kept its loaded length (elements edited in place), or the program only
            // appended to it (the new elements go after all the stored ones).
            guard let loaded, loaded.count + left.count == theirs.count,
                  mine.count == loaded.count || (mine.count > loaded.count && mine[..<loaded.count].elementsEqual(loaded))
            else { return out }
            var result: [PlistValue] = []
            result.reserveCapacity(theirs.count + mine.count - loaded.count)
            var next = 0  // in `mine`
            var skip = 0  // in `left`
            for i in theirs.indices {
                if skip < left.count, left[skip] == i {
                    result.append(theirs[i])
                    skip += 1
                } else {
                    result.append(merge(mine[next], over: theirs[i], loaded: loaded[next], defaults: nil, at: path + [.index(i)], dropped: dropped))
                    next += 1
                }
            }
            result += mine[next...]  // appended by the program
            return .array(result)
        default:
            return out
        }
    }
}

extension ModelArchive {
    /// For each loaded element, the position of the stored element it was decoded from: the
    /// same position when the two agree (the usual case, checked in one pass); else an
    /// unclaimed stored element that agrees with it (a `Set` is archived in its process's
    /// hashing order, not the stored one); else the same position if no other element took it,
    /// or `nil` (nothing to lay back). Only up to 1,000 misplaced elements are searched for.
    fileprivate static func storedPartners(of loaded: [PlistValue], in stored: [PlistValue]) -> [Int?] {
        var partners: [Int?] = Array(loaded.indices)
        let misplaced = loaded.indices.filter { !agrees(stored[$0], with: loaded[$0]) }
        guard !misplaced.isEmpty, misplaced.count <= 1_000 else { return partners }
        var free = Set(misplaced)  // stored positions no loaded element has claimed
        var unmatched: [Int] = []
        for i in misplaced {
            if let j = misplaced.first(where: { free.contains($0) && agrees(stored[$0], with: loaded[i]) }) {
                partners[i] = j
                free.remove(j)
            } else {
                unmatched.append(i)
            }
        }
        for i in unmatched { partners[i] = free.remove(i) }
        return partners
    }

    /// Whether `stored` could have decoded to what archives as `loaded`: every key `loaded` has,
    /// with agreeing values; numbers compared by value (an integer stored for a `Double`).
    private static func agrees(_ stored: PlistValue, with loaded: PlistValue) -> Bool {
        switch (stored, loaded) {
        case (.dictionary(let theirs), .dictionary(let mine)):
            for (key, value) in mine {
                guard let other = theirs[key], agrees(other, with: value) else { return false }
            }
            return true
        case (.array(let theirs), .array(let mine)):
            return theirs.count == mine.count && zip(theirs, mine).allSatisfy { agrees($0, with: $1) }
        case (.integer(let a), .real(let b)), (.real(let b), .integer(let a)):
            return a.doubleValue == b
        default:
            return stored == loaded
        }
    }
}

extension PlistValue {
    /// Whether this is a dictionary or an array (what a merge looks inside).
    fileprivate var isContainer: Bool {
        switch self {
        case .dictionary, .array: true
        default: false
        }
    }
}
