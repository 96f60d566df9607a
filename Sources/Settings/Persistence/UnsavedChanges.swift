import SettingsPlist

/// A file store's changes that are not saved yet, and the save and keep-alive waiting for them:
/// the persistence bookkeeping kept beside the store's values (``SettingsStore/State/unsaved``),
/// under the same lock, so that a write and the record of it are one step.
///
/// Writers record here on their own thread; the store's save takes the record on its
/// persistence thread (``takeDirty()``) and gives it back when the save does not write it.
struct UnsavedChanges: Sendable {
    /// Keys of the user layer changed since the last save, in order, possibly repeated
    /// (appending is cheaper than hashing on every write); see ``markDirty(_:)``.
    /// Only file-backed stores track them.
    var dirty: [SettingsKey] = []
    /// The length at which `dirty` is next compacted: twice its length after the last
    /// compaction (at least 4,096), so compaction costs O(1) amortised per write at any count.
    var compactAt = 4096
    /// Whether changed user keys are recorded in `dirty`: set once a file store has loaded
    /// its file (in-memory stores never record them).
    var tracksChanges = false
    /// Whether changes are saved by an autosave (file stores whose autosave delay is not `nil`).
    var autosaves = false
    /// Whether an autosave is scheduled or running (cleared by it once nothing is left to
    /// save; see ``takeSaveRequest()``).
    var saveScheduled = false
    /// Whether the store is held by ``PendingSaves``: set by ``markDirty(_:)`` when it gains
    /// unsaved changes, cleared by ``SettingsStore/releaseIfClean()`` once they are saved.
    var pending = false
    /// Old names removed from the user layer by a rename, with the value moved: the save
    /// removes each from the file only while the file still holds that value, so a value an
    /// older program wrote there after the move is never deleted (see ``SettingsFile/SaveBatch``).
    var renameRemovals: [SettingsKey: PlistValue] = [:]

    /// Whether anything is waiting to be saved.
    var isEmpty: Bool { dirty.isEmpty }

    /// Records a changed user key; the same key again right after itself (a burst of writes
    /// to one setting) is recorded once, and the list is compacted when a long burst repeats keys.
    /// - Returns: whether the store just gained unsaved changes (it must be kept alive until
    ///   they are saved; see ``PendingSaves``).
    mutating func markDirty(_ key: SettingsKey) -> Bool {
        guard tracksChanges else { return false }
        if dirty.last != key {
            dirty.append(key)
            if dirty.count >= compactAt {
                var seen = Set<SettingsKey>(minimumCapacity: dirty.count)
                dirty = dirty.filter { seen.insert($0).inserted }
                compactAt = max(4096, dirty.count * 2)
            }
        }
        guard !pending else { return false }
        pending = true
        return true
    }

    /// Takes the keys changed since the last save (given back by ``restoreDirty(_:)`` when
    /// the save fails).
    mutating func takeDirty() -> [SettingsKey] {
        defer {
            dirty = []
            compactAt = 4096
        }
        return dirty
    }

    /// Gives back keys taken for a save that failed, before any changed since.
    mutating func restoreDirty(_ keys: [SettingsKey]) {
        guard !keys.isEmpty else { return }
        dirty = keys + dirty
        compactAt = max(compactAt, dirty.count * 2)
    }

    /// Whether an autosave should be scheduled now: the store autosaves, there are unsaved
    /// changes, and none is scheduled or running (marks one as scheduled).
    mutating func takeSaveRequest() -> Bool {
        guard autosaves, !saveScheduled, !dirty.isEmpty else { return false }
        saveScheduled = true
        return true
    }
}
