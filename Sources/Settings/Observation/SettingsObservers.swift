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

    /// An observer of one key path.
    struct Entry {
        let key: SettingsKey
        /// The last effective value delivered (or current at registration).
        var last: Resolved?
        /// Old and new effective values.
        let onValue: @Sendable (_ old: Resolved?, _ new: Resolved?) -> Void
    }

    struct State {
        /// Key observers by id; found through ``keys`` (a write costs O(observers of its key),
        /// not O(all observers)), removed in O(1).
        var entries: [Int: Entry] = [:]
        /// Which key observers watch which key paths.
        var keys = KeyPathIndex()
        /// Store-wide observers (``add(onChange:)``) by id.
        var storeWide: [Int: @Sendable (SettingsChange) -> Void] = [:]
        /// User-layer observers (``add(onUserLayer:)``) by id.
        var userLayer: [Int: @Sendable (SettingsChange) -> Void] = [:]
        var nextID = 0
        var queue: [@Sendable () -> Void] = []
        var draining = false
    }

    private let state = Mutex(State())
    /// How many key and store observers there are: writes skip all change bookkeeping while it is zero.
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
            h.entries[id] = Entry(key: key, last: current(), onValue: onValue)
            h.keys.insert(id, at: key)
            return id
        }
    }

    /// Adds an observer of every change to the store (from the moment this returns).
    func add(onChange: @escaping @Sendable (SettingsChange) -> Void) -> Int {
        state.locked { h in
            entryCount.add(1, ordering: .sequentiallyConsistent)
            let id = h.nextID
            h.nextID += 1
            h.storeWide[id] = onChange
            return id
        }
    }

    /// Adds an observer of every change to the user layer (from the moment this returns).
    func add(onUserLayer: @escaping @Sendable (SettingsChange) -> Void) -> Int {
        state.locked { h in
            userLayerCount.add(1, ordering: .sequentiallyConsistent)
            let id = h.nextID
            h.nextID += 1
            h.userLayer[id] = onUserLayer
            return id
        }
    }

    /// Removes an observer (O(1) for store-wide ones, O(key depth) for key observers); callbacks
    /// already queued for it may still run once.
    func remove(_ id: Int) {
        let removed: Any? = state.locked { h -> Any? in
            if let entry = h.entries.removeValue(forKey: id) {
                h.keys.remove(id, at: entry.key)
                entryCount.subtract(1, ordering: .releasing)
                return entry
            }
            if let callback = h.storeWide.removeValue(forKey: id) {
                entryCount.subtract(1, ordering: .releasing)
                return callback
            }
            if let callback = h.userLayer.removeValue(forKey: id) {
                userLayerCount.subtract(1, ordering: .releasing)
                return callback
            }
            return nil
        }
        _ = removed  // released here, outside the lock: its closures may own anything
    }

    /// The number of observers, for tests and descriptions.
    var count: Int { entryCount.load(ordering: .acquiring) }

    /// Announces that the effective values at `keys` changed, and delivers the callbacks:
    /// store-wide observers first, then the observers of the keys concerned, each group in the
    /// order they were added.
    ///
    /// - Parameters:
    ///   - keys: key paths whose effective value changed.
    ///   - origin: where the change came from.
    ///   - resolve: reads the current effective values of some keys (under the store's lock).
    func publish(_ keys: [SettingsKey], origin: SettingsChange.Origin, resolve: ([SettingsKey]) -> [Resolved?]) {
        guard isActive, !keys.isEmpty else { return }
        let change = SettingsChange(keys: keys, origin: origin)
        let batch: [@Sendable () -> Void] = state.locked { h in
            for id in h.storeWide.keys.sorted() {
                if let onChange = h.storeWide[id] { h.queue.append { onChange(change) } }
            }
            let ids = h.keys.observers(relatedTo: keys)
            if !ids.isEmpty {
                let related = ids.compactMap { id in h.entries[id].map { (id, $0.key) } }
                let values = resolve(related.map(\.1))
                for ((id, _), new) in zip(related, values) {
                    guard let entry = h.entries[id] else { continue }
                    let old = entry.last
                    guard old?.value != new?.value else { continue }
                    h.entries[id]?.last = new
                    let onValue = entry.onValue
                    h.queue.append { onValue(old, new) }
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
            for id in h.userLayer.keys.sorted() {
                if let onUserLayer = h.userLayer[id] { h.queue.append { onUserLayer(change) } }
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

/// Key observers by the key path they watch, as a tree of key components: the observers a
/// change to a key path concerns (those of the key itself, of the namespaces above it and of
/// the keys below it) are found in time proportional to the key's depth and their number.
struct KeyPathIndex {
    private struct Node {
        var children: [String: Int] = [:]
        var ids: Set<Int> = []
        var parent = -1
        var name = ""
    }

    /// Node 0 is the root (the empty key path); freed nodes are reused.
    private var nodes = [Node()]
    private var free: [Int] = []

    /// Adds observer `id` at `key`.
    mutating func insert(_ id: Int, at key: SettingsKey) {
        var index = 0
        for component in key.components {
            if let child = nodes[index].children[component] {
                index = child
                continue
            }
            let node = Node(parent: index, name: component)
            let child: Int
            if let reused = free.popLast() {
                nodes[reused] = node
                child = reused
            } else {
                nodes.append(node)
                child = nodes.count - 1
            }
            nodes[index].children[component] = child
            index = child
        }
        nodes[index].ids.insert(id)
    }

    /// Removes observer `id` from `key`, and the nodes left with nothing below them.
    mutating func remove(_ id: Int, at key: SettingsKey) {
        var index = 0
        for component in key.components {
            guard let child = nodes[index].children[component] else { return }
            index = child
        }
        nodes[index].ids.remove(id)
        while index != 0, nodes[index].ids.isEmpty, nodes[index].children.isEmpty {
            let parent = nodes[index].parent
            nodes[parent].children[nodes[index].name] = nil
            nodes[index] = Node()
            free.append(index)
            index = parent
        }
    }

    /// The observers that a change to any of `keys` concerns, in the order they were added.
    func observers(relatedTo keys: [SettingsKey]) -> [Int] {
        var found = Set<Int>()
        for key in keys {
            var index = 0
            found.formUnion(nodes[0].ids)
            var reached = true
            for component in key.components {
                guard let child = nodes[index].children[component] else {
                    reached = false
                    break
                }
                index = child
                found.formUnion(nodes[index].ids)
            }
            guard reached else { continue }
            // Everything below the key (iteratively: no recursion on key depth).
            var stack = Array(nodes[index].children.values)
            while let next = stack.popLast() {
                found.formUnion(nodes[next].ids)
                stack.append(contentsOf: nodes[next].children.values)
            }
        }
        return found.sorted()
    }
}
