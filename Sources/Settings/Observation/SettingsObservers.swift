import SettingsPlist
import Synchronization

/// The observers of one ``SettingsStore`` and the queue their callbacks are delivered through.
///
/// Changes are published after the store's lock is released. Each observer of a key keeps the
/// last effective value it was told about, so it hears of a change only when that value differs.
/// Callbacks are queued under the lock and run with no lock held, in the order the changes
/// happened: the thread that publishes while nobody else is delivering drains the queue, so a
/// callback may read or write settings (its own writes are queued behind it, never re-entered).
final class SettingsObservers: Sendable {
    typealias Resolved = (value: PlistValue, layer: SettingsLayer)

    struct Entry {
        let id: Int
        /// The key observed, or `nil` for the whole store.
        let key: SettingsKey?
        /// The last effective value delivered (or current at registration).
        var last: Resolved?
        /// For key observers: old and new effective values.
        let onValue: (@Sendable (_ old: Resolved?, _ new: Resolved?) -> Void)?
        /// For store observers: every change.
        let onChange: (@Sendable (SettingsChange) -> Void)?
        /// For user-layer observers: every change to the user layer, hidden or not.
        var onUserLayer: (@Sendable (SettingsChange) -> Void)? = nil
    }

    struct State {
        var entries: [Entry] = []
        var nextID = 0
        var queue: [@Sendable () -> Void] = []
        var draining = false
    }

    private let state = Mutex(State())
    /// How many entries there are: writes skip all change bookkeeping while it is zero.
    private let entryCount = Atomic<Int>(0)

    /// How many user-layer observers there are: writes work out which user-layer key paths
    /// changed only while it is not zero.
    private let userLayerCount = Atomic<Int>(0)

    /// Whether anyone observes the store (cheap: one atomic load).
    var isActive: Bool { entryCount.load(ordering: .acquiring) > 0 }

    /// Whether anyone observes the user layer itself (read under the store's lock by writers).
    var watchesUserLayer: Bool { userLayerCount.load(ordering: .acquiring) > 0 }

    /// Adds an observer of `key`'s effective value; `current` reads it now.
    ///
    /// No change is missed or delivered twice: the observer is counted (``isActive``) before
    /// `current` takes the store's lock, and writers read ``isActive`` under that lock, so a
    /// write either happened before `current` read (and is in the initial value) or sees the
    /// observer and publishes; publishing waits for this hub's lock, held until the entry is in.
    func add(
        key: SettingsKey, current: () -> Resolved?,
        onValue: @escaping @Sendable (_ old: Resolved?, _ new: Resolved?) -> Void
    ) -> Int {
        state.locked { h in
            entryCount.add(1, ordering: .sequentiallyConsistent)
            let id = h.nextID
            h.nextID += 1
            h.entries.append(Entry(id: id, key: key, last: current(), onValue: onValue, onChange: nil))
            return id
        }
    }

    /// Adds an observer of every change to the store (from the moment this returns).
    func add(onChange: @escaping @Sendable (SettingsChange) -> Void) -> Int {
        state.locked { h in
            entryCount.add(1, ordering: .sequentiallyConsistent)
            let id = h.nextID
            h.nextID += 1
            h.entries.append(Entry(id: id, key: nil, last: nil, onValue: nil, onChange: onChange))
            return id
        }
    }

    /// Adds an observer of every change to the user layer (from the moment this returns).
    func add(onUserLayer: @escaping @Sendable (SettingsChange) -> Void) -> Int {
        state.locked { h in
            userLayerCount.add(1, ordering: .sequentiallyConsistent)
            let id = h.nextID
            h.nextID += 1
            h.entries.append(Entry(id: id, key: nil, last: nil, onValue: nil, onChange: nil, onUserLayer: onUserLayer))
            return id
        }
    }

    /// Removes an observer; callbacks already queued for it may still run once.
    func remove(_ id: Int) {
        let removed: Entry? = state.locked { h in
            guard let i = h.entries.firstIndex(where: { $0.id == id }) else { return nil }
            if h.entries[i].onUserLayer != nil {
                userLayerCount.subtract(1, ordering: .releasing)
            } else {
                entryCount.subtract(1, ordering: .releasing)
            }
            return h.entries.remove(at: i)
        }
        _ = removed  // released here, outside the lock: its closures may own anything
    }

    /// The number of observers, for tests and descriptions.
    var count: Int { entryCount.load(ordering: .acquiring) }

    /// Announces that the effective values at `keys` changed, and delivers the callbacks.
    ///
    /// - Parameters:
    ///   - keys: key paths whose effective value changed.
    ///   - origin: where the change came from.
    ///   - resolve: reads the current effective values of some keys (under the store's lock).
    func publish(_ keys: [SettingsKey], origin: SettingsChange.Origin, resolve: ([SettingsKey]) -> [Resolved?]) {
        guard isActive, !keys.isEmpty else { return }
        let change = SettingsChange(keys: keys, origin: origin)
        let batch: [@Sendable () -> Void] = state.locked { h in
            var related: [(index: Int, key: SettingsKey)] = []
            for (i, entry) in h.entries.enumerated() {
                if let key = entry.key {
                    if change.affects(key) { related.append((i, key)) }
                } else if let onChange = entry.onChange {
                    h.queue.append { onChange(change) }
                }
            }
            if !related.isEmpty {
                let values = resolve(related.map(\.key))
                for (item, new) in zip(related, values) {
                    let old = h.entries[item.index].last
                    guard old?.value != new?.value else { continue }
                    h.entries[item.index].last = new
                    if let onValue = h.entries[item.index].onValue { h.queue.append { onValue(old, new) } }
                }
            }
            return takeQueue(&h)
        }
        drain(batch)
    }

    /// Announces that the user layer's values at `keys` changed (whether or not they are
    /// visible), and delivers the callbacks in order with the others.
    func publishUserLayer(_ keys: [SettingsKey], origin: SettingsChange.Origin) {
        guard watchesUserLayer, !keys.isEmpty else { return }
        let change = SettingsChange(keys: keys, origin: origin)
        let batch = state.locked { h -> [@Sendable () -> Void] in
            for entry in h.entries {
                if let onUserLayer = entry.onUserLayer { h.queue.append { onUserLayer(change) } }
            }
            return takeQueue(&h)
        }
        drain(batch)
    }

    /// The queued callbacks, when nobody else is delivering (this caller then delivers them).
    private func takeQueue(_ h: inout State) -> [@Sendable () -> Void] {
        guard !h.draining, !h.queue.isEmpty else { return [] }
        h.draining = true
        defer { h.queue.removeAll(keepingCapacity: true) }
        return h.queue
    }

    /// Runs `batch` and whatever is queued meanwhile, with no lock held.
    private func drain(_ batch: [@Sendable () -> Void]) {
        guard !batch.isEmpty else { return }
        var jobs = batch
        while true {
            for job in jobs { job() }
            jobs = state.locked { h in
                guard !h.queue.isEmpty else {
                    h.draining = false
                    return []
                }
                defer { h.queue.removeAll(keepingCapacity: true) }
                return h.queue
            }
            if jobs.isEmpty { return }
        }
    }
}

/// A registered observer: keep it to keep receiving changes; `cancel()` it or let it go to stop.
///
/// ```swift
/// let observation = settings.$volume.onChange { new, old in print("volume \(old) -> \(new)") }
/// // ...
/// observation.cancel()     // or just drop the last reference
/// ```
public final class SettingsObservation: Sendable, Hashable {
    private let action: Mutex<(@Sendable () -> Void)?>

    init(cancel: @escaping @Sendable () -> Void) {
        action = Mutex(cancel)
    }

    /// Stops the callbacks. Safe to call more than once and from any thread; a callback already
    /// being delivered may still finish.
    public func cancel() {
        let cancel = action.locked { a -> (@Sendable () -> Void)? in
            defer { a = nil }
            return a
        }
        cancel?()
    }

    /// Keeps the observation in a set, like Combine's `store(in:)`.
    ///
    /// - Parameter set: the set that owns the observation.
    public func store(in set: inout Set<SettingsObservation>) {
        set.insert(self)
    }

    deinit { cancel() }

    public static func == (lhs: SettingsObservation, rhs: SettingsObservation) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
