public import Observation
public import SettingsPlist
import Synchronization

/// A store can be observed with the Observation framework: every `@Setting` read inside
/// `withObservationTracking` registers the setting's key, and the `onChange` closure runs when
/// that key's effective value changes, from any source.
///
/// ```swift
/// withObservationTracking {
///     _ = settings.volume
/// } onChange: {
///     print("volume changed")
/// }
/// ```
extension SettingsStore: Observable {}

nonisolated extension SettingsStore {
    /// Calls `handler` with every change to the store's effective values: this process's writes,
    /// `reset()`, registered defaults and override files that change what reads see, and changes
    /// made to the file by another process or by hand.
    ///
    /// The handler runs with no lock held, on the thread that made the change (or on a thread
    /// already delivering earlier changes, so that changes are delivered in order). It may read
    /// and write settings.
    ///
    /// ```swift
    /// let observation = store.onChange { change in print(change) }   // "write: autoPlay"
    /// ```
    ///
    /// - Parameter handler: called once per change, with the keys whose effective value changed.
    /// - Returns: the observation: keep it to keep receiving changes.
    public func onChange(_ handler: @escaping @Sendable (SettingsChange) -> Void) -> SettingsObservation {
        ensureLoaded()  // observing is using: the file is read and watched from now on
        let id = values.observers.add(onChange: handler)
        return SettingsObservation { [observers = values.observers] in observers.remove(id) }
    }

    /// Calls `handler` with the new and old effective value of `key` whenever it changes.
    ///
    /// ```swift
    /// let observation = store.onChange(of: "Network/timeout") { new, old in
    ///     print("timeout \(old?.description ?? "unset") -> \(new?.description ?? "unset")")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path; a namespace key reports changes to any key below it.
    ///   - handler: the new value and the old one (`nil`: no layer has the key).
    /// - Returns: the observation: keep it to keep receiving changes.
    public func onChange(
        of key: SettingsKey, _ handler: @escaping @Sendable (_ new: PlistValue?, _ old: PlistValue?) -> Void
    ) -> SettingsObservation {
        onChange(of: key, layered: { old, new in handler(new?.value, old?.value) })
    }

    /// The changes to the store, as an asynchronous sequence (see ``onChange(_:)`` for what is
    /// delivered): ``changes(bufferingNewest:)`` with room for 1,024 unread changes.
    ///
    /// Observation starts when the property is read, not when iteration starts: read it before
    /// starting the task that iterates, and no change made in between is missed. The sequence
    /// ends when the consuming task is cancelled; dropping it stops the observation.
    ///
    /// ```swift
    /// let changes = store.changes          // observing from here
    /// Task {
    ///     for await change in changes where change.affects("theme") { applyTheme() }
    /// }
    /// store["theme"] = "dark"              // delivered to the task, even if it has not started yet
    /// ```
    public var changes: AsyncStream<SettingsChange> {
        changes(bufferingNewest: 1024)
    }

    /// The changes to the store, as an asynchronous sequence that holds at most `limit` unread
    /// changes: a consumer that falls behind (or never reads) costs bounded memory.
    ///
    /// When more than `limit` changes wait, the oldest are dropped and replaced by one change
    /// with origin ``SettingsChange/Origin/overflow`` at the front, whose keys are every key the
    /// dropped changes named: re-read those keys when it arrives. `limit: 1` keeps only the
    /// newest change (and the overflow marker before it).
    ///
    /// ```swift
    /// for await change in store.changes(bufferingNewest: 16) {
    ///     if change.origin == .overflow { reload(change.keys) } else { apply(change) }
    /// }
    /// ```
    ///
    /// - Parameter limit: how many unread changes are kept (at least 1).
    /// - Returns: the sequence; observation starts now.
    public func changes(bufferingNewest limit: Int) -> AsyncStream<SettingsChange> {
        let buffer = ChangeBuffer(limit: max(1, limit))
        buffer.keep(onChange { [weak buffer] change in buffer?.push(change) })
        return AsyncStream(unfolding: { await buffer.next() }, onCancel: { buffer.finish() })
    }

    /// The effective values of `key`, as an asynchronous sequence: optionally the current value
    /// first, then each new value as it changes.
    ///
    /// ```swift
    /// for await value in store.values(for: "volume") { print(value?.doubleValue ?? 0) }
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path.
    ///   - initial: whether the sequence starts with the current value.
    public func values(for key: SettingsKey, initial: Bool = true) -> AsyncStream<PlistValue?> {
        AsyncStream { continuation in
            let observation = onChange(of: key) { new, _ in continuation.yield(new) }
            if initial { continuation.yield(value(for: key)) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// What the Observation framework tracks for one key: reading it reads the effective value.
    subscript(observed key: SettingsKey) -> PlistValue? { value(for: key) }

    /// The key path under which reads of `key` are reported to the Observation framework;
    /// from now on, changes to `key` are passed on to the framework. Called by settings when
    /// they fill their cache.
    func observationKeyPath(for key: SettingsKey) -> any ObservedKeyPath {
        withState { s in
            if let keyPath = s.tracked[key] { return keyPath }
            let keyPath: any ObservedKeyPath = \SettingsStore.[observed: key]
            s.tracked.insert(keyPath, for: key)
            return keyPath
        }
    }
}

/// The key path a setting's reads are reported under to the Observation framework.
@usableFromInline typealias ObservedKeyPath = KeyPath<SettingsStore, PlistValue?> & Sendable

/// The buffer of one ``SettingsStore/changes(bufferingNewest:)`` sequence: at most `limit`
/// changes wait; older ones are folded into one `.overflow` change at the front.
final class ChangeBuffer: Sendable {
    private struct State {
        var items: [SettingsChange] = []
        var head = 0
        /// Keys of the changes dropped since the consumer last read, in order, without repeats.
        var overflow: [SettingsKey] = []
        var overflowSet: Set<SettingsKey> = []
        var waiter: CheckedContinuation<SettingsChange?, Never>?
        var finished = false
        var observation: SettingsObservation?
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Holds the observation that fills the buffer (cancelled with the buffer).
    func keep(_ observation: SettingsObservation) {
        state.locked { $0.observation = observation }
    }

    /// Adds a change, or hands it to the waiting consumer.
    func push(_ change: SettingsChange) {
        let waiter = state.locked { s -> CheckedContinuation<SettingsChange?, Never>? in
            guard !s.finished else { return nil }
            if let waiter = s.waiter {
                s.waiter = nil
                return waiter
            }
            s.items.append(change)
            if s.items.count - s.head > limit {
                for key in s.items[s.head].keys where s.overflowSet.insert(key).inserted { s.overflow.append(key) }
                s.head += 1
                if s.head >= 64 && s.head * 2 >= s.items.count {
                    s.items.removeFirst(s.head)
                    s.head = 0
                }
            }
            return nil
        }
        waiter?.resume(returning: change)
    }

    /// The next change (the overflow marker first), waiting for one; `nil` once finished.
    func next() async -> SettingsChange? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SettingsChange?, Never>) in
                let ready = state.locked { s -> SettingsChange?? in
                    if s.finished { return .some(nil) }
                    if !s.overflow.isEmpty {
                        defer {
                            s.overflow = []
                            s.overflowSet = []
                        }
                        return SettingsChange(keys: s.overflow, origin: .overflow)
                    }
                    if s.head < s.items.count {
                        defer { s.head += 1 }
                        return s.items[s.head]
                    }
                    s.items.removeAll(keepingCapacity: true)
                    s.head = 0
                    s.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    /// Ends the sequence and the observation.
    func finish() {
        let (waiter, observation) = state.locked { s -> (CheckedContinuation<SettingsChange?, Never>?, SettingsObservation?) in
            s.finished = true
            s.items = []
            defer {
                s.waiter = nil
                s.observation = nil
            }
            return (s.waiter, s.observation)
        }
        waiter?.resume(returning: nil)
        observation?.cancel()
    }
}
