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

extension SettingsStore {
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
    public nonisolated func onChange(_ handler: @escaping @Sendable (SettingsChange) -> Void) -> SettingsObservation {
        ensureLoaded()  // observing is using: the file is read and watched from now on
        let id = observers.add(onChange: handler)
        return SettingsObservation { [observers] in observers.remove(id) }
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
    public nonisolated func onChange(
        of key: SettingsKey, _ handler: @escaping @Sendable (_ new: PlistValue?, _ old: PlistValue?) -> Void
    ) -> SettingsObservation {
        onChange(of: key, layered: { old, new in handler(new?.value, old?.value) })
    }

    /// The changes to the store, as an asynchronous sequence (see ``onChange(_:)`` for what is
    /// delivered). Observation starts when the property is read; the sequence ends when the
    /// consuming task is cancelled.
    ///
    /// ```swift
    /// for await change in store.changes where change.affects("theme") {
    ///     applyTheme()
    /// }
    /// ```
    public nonisolated var changes: AsyncStream<SettingsChange> {
        AsyncStream { continuation in
            let observation = onChange { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
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
    public nonisolated func values(for key: SettingsKey, initial: Bool = true) -> AsyncStream<PlistValue?> {
        AsyncStream { continuation in
            let observation = onChange(of: key) { new, _ in continuation.yield(new) }
            if initial { continuation.yield(value(for: key)) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// What the Observation framework tracks for one key: reading it reads the effective value.
    nonisolated subscript(observed key: SettingsKey) -> PlistValue? { value(for: key) }

    /// The key path under which reads of `key` are reported to the Observation framework;
    /// from now on, changes to `key` are passed on to the framework. Called by settings when
    /// they fill their cache.
    nonisolated func observationKeyPath(for key: SettingsKey) -> any ObservedKeyPath {
        withState { s in
            if let keyPath = s.tracked[key] { return keyPath }
            let keyPath: any ObservedKeyPath = \SettingsStore.[observed: key]
            s.tracked[key] = keyPath
            return keyPath
        }
    }
}

/// The key path a setting's reads are reported under to the Observation framework.
@usableFromInline typealias ObservedKeyPath = KeyPath<SettingsStore, PlistValue?> & Sendable
