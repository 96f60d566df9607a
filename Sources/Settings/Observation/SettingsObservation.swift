import SettingsPlist
import Synchronization

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
