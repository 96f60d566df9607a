public import SettingsPlist
import SettingsFiles

/// Several writes to a store's user layer made as one: see ``SettingsStore/transaction(_:)``.
///
/// Reads through the transaction see its own writes to the same key path, then the store.
public struct SettingsTransaction {
    /// The store the writes go to when the transaction ends.
    public let store: SettingsStore
    /// The writes, in order (a later write to a key path wins).
    var writes: [(key: SettingsKey, value: PlistValue?)] = []

    init(store: SettingsStore) {
        self.store = store
    }

    /// The value `key` will have: this transaction's own write to it, else the store's.
    public subscript(key: SettingsKey) -> PlistValue? {
        get {
            if let write = writes.last(where: { $0.key == key }) { return write.value }
            return store[key]
        }
        set { set(newValue, for: key) }
    }

    /// Writes `value` to the user layer when the transaction ends (`nil` removes the user's value).
    public mutating func set(_ value: PlistValue?, for key: SettingsKey) {
        writes.append((key, value))
    }

    /// Removes the user's value for `key` when the transaction ends.
    public mutating func removeValue(for key: SettingsKey) {
        writes.append((key, nil))
    }
}

extension SettingsStore {
    /// Changes several keys as one: they are applied together under the store's lock, announced
    /// to observers as one change, saved as one save (one generation of the file's history),
    /// and no reader in this process or another ever sees some of them without the others (a
    /// save in progress takes none of them or all).
    ///
    /// Reads through `settings` are isolated too, as DataStore's `updateData` and SwiftData's
    /// transactions are: when anything changed the store between the start of `body` and its
    /// end (another thread's write, a reload of the file), the writes are dropped and `body`
    /// runs again on the store as it is now. So a read-modify-write never loses another's
    /// update; `body` may run more than once, and should do nothing but read and write.
    ///
    /// ```swift
    /// try store.transaction { settings in
    ///     settings["Network/host"] = "example.org"
    ///     settings["Network/port"] = 8443
    /// }
    /// ```
    ///
    /// - Parameter body: makes the writes (reads through `settings` see them).
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/unstorable`` naming the key when
    ///   one write could never be stored (too deep, too large), or ``SettingsError/Code/locked``
    ///   naming the file when an administrator locked one of the keys: then none is made.
    public nonisolated func transaction(_ body: (inout SettingsTransaction) -> Void) throws(SettingsError) {
        ensureLoaded()  // a file store's first load is a change of its own: not one to run `body` twice for
        while true {
            let start = values.generation
            var transaction = SettingsTransaction(store: self)
            body(&transaction)
            guard !transaction.writes.isEmpty else { return }
            for (key, value) in transaction.writes {
                if let refusal = key.refusal(toStore: value, sizeLimit: persistence?.maximumFileSize) {
                    var error = refusal
                    error.append(detail: "nothing in the transaction was changed")
                    throw error
                }
            }
            let writes = transaction.writes
            var conflicted = false
            var locked: PlistLocks.Refusal?
            deliver(commit(.user, origin: .write) { s, audience in
                // The generation moves under this lock with every change: unchanged, so is
                // everything `body` read.
                guard values.generation == start else {
                    conflicted = true
                    return .unchanged
                }
                // A key the administrator locked refuses the whole transaction (hook: locks).
                for (key, _) in writes {
                    if let refusal = Self.lockRefusal(s, key: key) {
                        locked = refusal
                        return .unchanged
                    }
                }
                var changed: [SettingsKey] = []
                var userChanges: [SettingsKey] = []
                var wrote = false
                for (key, value) in writes {
                    let userBefore = audience.userLayer ? s[.user].value(at: key.components) : nil
                    guard let effect = s.write(value, at: key, in: .user, comparing: audience.comparing || audience.userLayer) else { continue }
                    s.markDirtyKeepingAlive(key, store: self)
                    wrote = true
                    changed += effect.keys(writing: key)
                    if audience.userLayer {
                        userChanges += Self.leafChanges(at: key, from: userBefore, to: s[.user].value(at: key.components))
                    }
                }
                guard wrote else { return .unchanged }
                var listed = Set<SettingsKey>()
                return .keys(changed: changed.filter { listed.insert($0).inserted }, userChanges: userChanges)
            })
            if let locked { throw SettingsError(locked) }
            if !conflicted { return }
        }
    }
}
