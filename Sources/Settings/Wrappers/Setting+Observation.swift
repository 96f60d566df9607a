import Synchronization

extension SettingBox {
    /// Observes the setting's final value (decoded, rule-checked, default applied): `handler` gets
    /// the new and old value whenever they differ.
    func observe(_ handler: @escaping @Sendable (_ new: Value, _ old: Value) -> Void) -> SettingsObservation {
        let (boundKey, store) = state.locked { ($0.key, $0.store) }
        let key = requireKey(boundKey)
        let conversion = self.conversion
        return store.onChange(of: key, layered: { [weak store] old, new in
            guard let store else { return }
            let oldValue = conversion.read(old?.value, Context(key: key, layer: old?.layer, store: store, isCurrent: false))
            let newValue = conversion.read(new?.value, Context(key: key, layer: new?.layer, store: store, isCurrent: false))
            if sameValue(oldValue, newValue) { return }
            handler(newValue, oldValue)
        })
    }
}

extension Setting {
    /// Calls `handler` with the new and old value whenever the setting's value changes, from any
    /// source: this process's writes, `reset()`, registered defaults, override files, and changes
    /// to the file made elsewhere (Palau's `didSet`).
    ///
    /// The handler runs with no lock held and may read or write settings. Nothing is delivered
    /// when the value did not change.
    ///
    /// ```swift
    /// let observation = settings.$volume.onChange { new, old in print("volume \(old) -> \(new)") }
    /// settings.volume = 0.8          // prints "volume 0.5 -> 0.8"
    /// observation.cancel()
    /// ```
    ///
    /// - Parameter handler: the new value, then the old one.
    /// - Returns: the observation: keep it to keep receiving changes.
    public func onChange(_ handler: @escaping @Sendable (_ newValue: Value, _ oldValue: Value) -> Void) -> SettingsObservation {
        box.observe(handler)
    }

    /// The setting's values as an asynchronous sequence: the current value first (unless
    /// `initial` is `false`), then each new value. Ends when the consuming task is cancelled.
    ///
    /// ```swift
    /// for await theme in settings.$theme.values() { apply(theme) }
    /// ```
    ///
    /// - Parameter initial: whether the sequence starts with the current value.
    public func values(initial: Bool = true) -> AsyncStream<Value> {
        AsyncStream { continuation in
            let observation = box.observe { new, _ in continuation.yield(new) }
            if initial { continuation.yield(wrappedValue) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }
}

extension ReadOnlySetting {
    /// Calls `handler` with the new and old value whenever the option's value changes (see
    /// ``Setting/onChange(_:)``).
    ///
    /// - Parameter handler: the new value, then the old one.
    /// - Returns: the observation: keep it to keep receiving changes.
    public func onChange(_ handler: @escaping @Sendable (_ newValue: Value, _ oldValue: Value) -> Void) -> SettingsObservation {
        setting.onChange(handler)
    }

    /// The option's values as an asynchronous sequence (see ``Setting/values(initial:)``).
    ///
    /// - Parameter initial: whether the sequence starts with the current value.
    public func values(initial: Bool = true) -> AsyncStream<Value> {
        setting.values(initial: initial)
    }
}

nonisolated extension SettingsStore {
    /// Observes `key` with the layers of the old and new values (for typed observers).
    func onChange(
        of key: SettingsKey,
        layered handler: @escaping @Sendable (_ old: SettingsObservers.Resolved?, _ new: SettingsObservers.Resolved?) -> Void
    ) -> SettingsObservation {
        ensureLoaded()  // before the observers' lock: loading may report to handlers that observe
        let id = values.observers.add(key: key, current: { values.storage.locked { $0.resolve(key) } }, onValue: handler)
        return SettingsObservation { [observers = values.observers] in observers.remove(id) }
    }
}
