#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
public import SettingsFiles


/// One saved version of the user's file, from ``SettingsStore/history()``: its number, who saved
/// it and when, the keys that save changed (each once, whatever the number of writes before the
/// save), and the file's bytes.
///
/// ```swift
/// for generation in try await store.history() {
///     print(generation.number, generation.writer.summary, generation.changed)   // 3 set by MyApp pid 4121 at … [Network/timeout]
/// }
/// ```
///
/// Its keys are ``SettingsKey``s, as ``SettingsChange/keys`` are; the files layer's
/// `PlistGeneration` (from `PlistHistory`) holds them as component arrays.
public struct SettingsGeneration: Hashable, Sendable {
    /// Its number: 1 for the first kept, one more for each one after.
    public var number: Int
    /// Who saved it and when.
    public var writer: SettingsProvenance
    /// The keys that save changed, each once, in the order they were first written.
    public var changed: [SettingsKey]
    /// The file's bytes as saved.
    public var bytes: Data

    /// The generation `PlistHistory` lists, with its keys as ``SettingsKey``s.
    ///
    /// - Parameter generation: a generation of the files layer.
    public init(_ generation: PlistGeneration) {
        number = generation.number
        writer = generation.writer
        changed = generation.changed.map { SettingsKey(components: $0) }
        bytes = generation.bytes
    }

    /// The file's contents as saved.
    ///
    /// - Returns: the dictionary.
    /// - Throws: `PlistError` when the kept bytes do not parse, `PlistFile.Failure` when the
    ///   root is not a dictionary.
    public func contents() throws -> PlistDictionary {
        try PlistGeneration(number: number, writer: writer, changed: changed.map(\.components), bytes: bytes).contents()
    }
}

extension SettingsStore {
    /// Who last set the value at `key` in the user's file, and when.
    ///
    /// Recorded at each save, on the store's persistence thread, in `provenance.plist` beside the
    /// file (in its companion directory `.settings.plist.meta`, so the file stays a plain plist);
    /// it survives restarts and is bounded to the keys the file holds. Reading it never waits for
    /// the disk. A value changed by a writer that records nothing (a person with an editor, an
    /// older version of the library) reads as `SettingsProvenance.Origin.changedOnDisk` with the
    /// time it was seen. A key this process changed and has not saved yet reads as this process's
    /// write, now.
    ///
    /// ```swift
    /// if let who = store.provenance(of: "Network/timeout") {
    ///     print(who.summary)   // "set by MyApp pid 4121 at 2026-11-26 10:15:02 UTC"
    /// }
    /// ```
    ///
    /// - Parameter key: the key path (a namespace gives its most recently set leaf).
    /// - Returns: the provenance, or `nil` when the user's file has no value there (or the store
    ///   keeps no file).
    public nonisolated func provenance(of key: SettingsKey) -> SettingsProvenance? {
        guard persistence != nil else { return nil }
        ensureLoaded()
        let unsaved = values.storage.locked { s in
            s.unsaved.dirty.contains { $0.components.starts(with: key.components) || key.components.starts(with: $0.components) }
                ? s[.user].value(at: key.components) != nil : nil
        }
        if let unsaved { return unsaved ? SettingsProvenance.thisProcess(.write) : nil }
        guard let history else { return nil }
        let (log, contents, date) = history.state.locked { ($0.log, $0.contents, $0.fileDate) }
        return log.provenance(of: key.components, in: contents, fileDate: date)
    }

    /// The saved versions (generations) of the user's file kept in its history, oldest first:
    /// each with its number, who saved it and when, the keys it changed, and its contents.
    ///
    /// Every save keeps one, up to ``PersistenceOptions/historyLimit`` (default 20) and
    /// ``PersistenceOptions/historyByteBudget``; the `settings` tool's edits keep one too
    /// (`settings history DOMAIN` lists them).
    ///
    /// ```swift
    /// for generation in try await store.history() {
    ///     print(generation.number, generation.writer.summary, generation.changed)
    /// }
    /// ```
    ///
    /// - Returns: the generations (empty for an in-memory store or a file with no history yet).
    /// - Throws: ``SettingsError`` (`.invalidFile`) when the history cannot be read safely.
    public nonisolated func history() async throws(SettingsError) -> [SettingsGeneration] {
        guard let backend else { return [] }  // an in-memory store keeps no history
        return try await history(backend)
    }

    /// ``history()`` on the store's persistence thread (reading the history is blocking file work).
    private func history(_ backend: isolated FileBackend) throws(SettingsError) -> [SettingsGeneration] {
        let path = try backend.file.resolved().file.path
        do {
            return try PlistHistory.list(for: path).map(SettingsGeneration.init)
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: "cannot read its history: \(error)")
        }
    }

    /// Restores the user's file to generation `number` of its history, or only `keys` of it,
    /// and saves. The restore is an ordinary save: it is kept as a generation of its own (so it
    /// can be undone by restoring the one before), its keys are recorded with origin
    /// `SettingsProvenance.Origin.restore`, and observers see the changed keys at once.
    ///
    /// ```swift
    /// let generations = try await store.history()
    /// try await store.restore(generations[generations.count - 2].number)   // undo the last save
    /// try await store.restore(3, keys: ["Network/timeout"])
    /// ```
    ///
    /// - Parameters:
    ///   - number: the generation's number (``SettingsGeneration/number``).
    ///   - keys: the key paths to restore (a key the generation does not hold is removed);
    ///     `nil` restores the whole file.
    /// - Throws: ``SettingsError``: `.invalidFile` when the generation is not kept or does not
    ///   parse; ``SettingsError/Code/locked`` (nothing restored) when a key it would change is
    ///   locked by an administrator (see ``isWritable(_:)``); or as ``flush()`` does.
    public nonisolated func restore(_ number: Int, keys: [SettingsKey]? = nil) async throws(SettingsError) {
        guard let backend else { return }  // an in-memory store keeps no history
        try await restore(number, keys: keys, backend)
    }

    /// ``restore(_:keys:)`` on the store's persistence thread (reading a generation is blocking
    /// file work).
    private func restore(_ number: Int, keys: [SettingsKey]?, _ backend: isolated FileBackend) async throws(SettingsError) {
        try await flush()
        let path = try backend.file.resolved().file.path
        let kept: PlistDictionary
        do {
            guard let generation = try PlistHistory.generation(number, for: path) else {
                throw SettingsError(.invalidFile, path: path, detail: "generation \(number) is not kept in its history")
            }
            kept = try generation.contents()
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(.invalidFile, path: path, detail: "cannot read generation \(number): \(error)")
        }
        // What another process wrote since this store last looked is seen first, so the restore
        // replaces it too: the file becomes generation `number` for the keys restored.
        reloadIfChanged(backend)
        let current = values.storage.locked { $0[.user] }
        let paths = keys ?? kept.changedLeafPaths(from: current)
        // As every other write: a key an administrator locked refuses the restore, whole.
        let refusal = values.storage.locked { s -> PlistLocks.Refusal? in
            for path in paths { if let refusal = Self.lockRefusal(s, key: path) { return refusal } }
            return nil
        }
        if let refusal {
            throw SettingsError(refusal)
        }
        applyToUserLayer(paths.map { ($0, kept.value(at: $0.components)) }, origin: .write)
        // Every restored key is written by the save, even one whose value this store already
        // holds: the file may hold another (written in the moment before the save's lock).
        values.storage.locked { s in for key in paths { s.markDirtyKeepingAlive(key, store: self) } }
        history?.note(keys ?? paths, as: .restore)
        try await flush()
    }
}
