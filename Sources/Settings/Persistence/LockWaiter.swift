#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles
import Synchronization

/// A place in the queue for a settings file's lock while another process holds it.
///
/// Saves try the lock without blocking (`LOCK_NB`). Polling alone is unfair: under contention
/// from writers that save back to back, a poller rarely lands in the short gap between two of
/// their saves and can wait for ever (measured: 4 processes flushing after each write, one
/// starved past its 2 s lock timeout). So a store that finds the lock busy also starts one
/// waiter: a thread of its own that opens the lock file and blocks in `flock(LOCK_EX)`, where the
/// kernel wakes it as soon as the lock is released. The store then takes the locked descriptor at
/// its next attempt, and `onAcquired` asks for that attempt at once.
///
/// Nothing in the store waits for the waiter: the store's own waits stay bounded by
/// ``PersistenceOptions/lockTimeout``. A waiter given up (the store was freed, or saved without
/// it) closes its descriptor as soon as it has one, releasing the lock.
final class LockWaiter: Sendable {
    private enum State {
        case waiting
        case acquired(PlistFile.Lock)
        case failed
        case abandoned
    }

    /// Shared with the waiting thread, which outlives the waiter when it is given up.
    private final class Shared: Sendable {
        let state = Mutex(State.waiting)
    }

    private let shared = Shared()

    /// Starts waiting for the lock at `path`; `onAcquired` runs on the waiting thread once the
    /// lock is held (not when the waiter was given up first).
    init(path: String, onAcquired: @escaping @Sendable () -> Void) {
        let shared = self.shared
        let body: @Sendable () -> Void = {
            // Opens the lock file as ``PlistFile/tryLock(_:)`` does (never through a link, only
            // a regular file) and waits in `flock`.
            let lock = try? PlistFile.waitForLock(path)
            let keep = shared.state.locked { state -> Bool in
                guard let lock, case .waiting = state else {
                    if case .waiting = state { state = .failed }
                    return false
                }
                state = .acquired(lock)
                return true
            }
            if keep { onAcquired() } else { lock?.release() }
        }
        Self.startThread(body)
    }

    deinit { abandon() }

    /// The lock, once it is held: the caller owns it from then on (and releases it). `nil`
    /// while still waiting.
    func take() -> PlistFile.Lock? {
        shared.state.locked { state in
            guard case .acquired(let lock) = state else { return nil }
            state = .abandoned
            return lock
        }
    }

    /// Whether waiting failed (the lock file could not be opened): the caller goes back to
    /// trying the lock itself, which reports why.
    var hasFailed: Bool {
        shared.state.locked { if case .failed = $0 { true } else { false } }
    }

    /// Gives the place up: a lock already held is released at once, one acquired later is
    /// released as soon as it is.
    func abandon() {
        let lock = shared.state.locked { state -> PlistFile.Lock? in
            defer { state = .abandoned }
            if case .acquired(let lock) = state { return lock }
            return nil
        }
        lock?.release()
    }

    private final class Start: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        var handle = pthread_t()
        let context = Unmanaged.passRetained(Start(body)).toOpaque()
        let created = pthread_create(&handle, nil, { context in
            guard let context else { return nil }
            Unmanaged<Start>.fromOpaque(context).takeRetainedValue().body()
            return nil
        }, context)
        if created == 0 {
            pthread_detach(handle)
        } else {
            // No thread: the waiter simply never acquires; polling goes on as before.
            Unmanaged<Start>.fromOpaque(context).release()
        }
    }
}
