import PostgresNIO
import Synchronization

/// A continuation resumed once, by whichever of several racers comes first.
final class OneShot<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var done = false
    }
    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { s -> Result<T, any Error>? in
            if let e = s.early { return e }
            s.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Resumes with `result` if nobody did; returns whether this call did.
    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        let continuation = state.withLock { s -> CheckedContinuation<T, any Error>?? in
            guard !s.done else { return .none }
            s.done = true
            guard let c = s.continuation else {
                s.early = result
                return .some(nil)
            }
            s.continuation = nil
            return .some(c)
        }
        guard case .some(let c) = continuation else { return false }
        c?.resume(with: result)
        return true
    }
}

/// Calls handlers when a connection closes: one `closeFuture` callback per connection, however
/// many operations wait on it.
final class CloseWatch: Sendable {
    private struct State {
        var handlers: [Int: @Sendable () -> Void] = [:]
        var next = 0
        var closed = false
    }
    private let state = Mutex(State())
    private static let all = Mutex<[ObjectIdentifier: CloseWatch]>([:])

    /// The watch of `conn`, created (and hooked to its close) on first use.
    static func of(_ conn: PostgresConnection) -> CloseWatch {
        let id = ObjectIdentifier(conn)
        let (watch, created) = all.withLock { all -> (CloseWatch, Bool) in
            if let w = all[id] { return (w, false) }
            let w = CloseWatch()
            all[id] = w
            return (w, true)
        }
        if created {
            conn.closeFuture.whenComplete { _ in
                _ = all.withLock { $0.removeValue(forKey: id) }
                watch.fire()
            }
        }
        return watch
    }

    /// Adds a handler; it runs at once if the connection is already closed.
    func add(_ handler: @escaping @Sendable () -> Void) -> Int {
        let id = state.withLock { s -> Int? in
            guard !s.closed else { return nil }
            s.next += 1
            s.handlers[s.next] = handler
            return s.next
        }
        guard let id else {
            handler()
            return -1
        }
        return id
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }

    private func fire() {
        let handlers = state.withLock { s in
            s.closed = true
            defer { s.handlers = [:] }
            return Array(s.handlers.values)
        }
        for h in handlers { h() }
    }
}
