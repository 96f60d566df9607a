#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// The thread a ``SettingsStore`` runs its persistence on: loading, saving, merging,
/// reloading, watching, autosaves and their retries.
///
/// `SettingsStore` is an actor whose executor is its own one of these, so everything isolated to
/// a store runs here, never on Swift's cooperative pool: a slow disk, a stalled network file
/// system or an `fsync` cannot hold up the program's tasks. Nothing here ever waits for another
/// process: a busy file lock is tried without blocking and retried later (see
/// ``SettingsStore/flush()``).
///
/// One thread per file store (measured: with one thread shared by all stores, a store saving
/// 40,000 keys held up another store's `flush()` for seconds, past its lock timeout; a thread
/// costs about 60 µs to start and no memory beyond its stack). The thread starts with the
/// store's first job, so an in-memory store or a file store never used starts none, and ends
/// when the store is freed.
final class PersistenceExecutor: SerialExecutor {
    private enum Work: Sendable {
        case job(UnownedJob)
        case block(@Sendable () -> Void)
        /// The store is gone: the thread ends once the work queued before this is done.
        case stop
    }

    private struct Queue: Sendable {
        var items: [Work] = []
        var head = 0
        var started = false
        /// Blocks to run once their time comes, soonest last.
        var timers: [(deadline: UInt64, body: @Sendable () -> Void)] = []
    }

    private let queue = Mutex(Queue())
    /// Counts queued items; the thread waits on it.
    private let wake = DispatchSemaphore(value: 0)
    /// The thread's identity, once it runs (0 before).
    private let thread = Atomic<UInt>(0)

    init() {}

    /// Ends the thread (if it started) once the work queued so far is done. Called when the store
    /// is freed.
    func stop() {
        let started = queue.locked { $0.started }
        if started { push(.stop) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        push(.job(UnownedJob(job)))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Called by the runtime when isolation to a store is assumed outside a task (for example by
    /// ``run(_:)``): only the executor's own thread is isolated.
    func checkIsolated() {
        precondition(isCurrent, "settings persistence ran outside its executor thread")
    }

    /// Whether the calling thread is the executor's thread.
    var isCurrent: Bool {
        let id = thread.load(ordering: .acquiring)
        return id != 0 && id == Self.currentThreadID()
    }

    /// Runs `body` on the executor thread and waits for it: inline when already there (so a
    /// diagnostics handler or observer that flushes cannot deadlock).
    ///
    /// The wait is as long as the jobs queued before `body` plus `body` itself; none of them
    /// waits for anything outside the process without a bound.
    func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) throws(E) -> T {
        if isCurrent { return try body() }
        let result = Mutex<Result<T, E>?>(nil)
        let done = DispatchSemaphore(value: 0)
        push(.block {
            let outcome = Result { () throws(E) -> T in try body() }
            result.locked { $0 = outcome }
            done.signal()
        })
        done.wait()
        // The block always stores a result before signalling.
        guard let outcome = result.locked({ $0 }) else { preconditionFailure("executor block finished without a result") }
        return try outcome.get()
    }

    /// ``run(_:)`` for a block with no result: no generic wrapper to instantiate (used on the
    /// start-up path, where each first use of a generic type costs a metadata look-up).
    func runAndWait(_ body: @escaping @Sendable () -> Void) {
        if isCurrent { return body() }
        let done = DispatchSemaphore(value: 0)
        push(.block {
            body()
            done.signal()
        })
        done.wait()
    }

    private func push(_ work: Work) {
        let start = queue.locked { q -> Bool in
            q.items.append(work)
            defer { q.started = true }
            return !q.started
        }
        if start { startThread() }
        wake.signal()
    }

    /// Runs `body` on the executor thread once `delay` has passed, without a task and without
    /// touching Swift's cooperative pool (a short program that never reaches the deadline starts
    /// no other thread).
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        let deadline = DispatchTime.now().uptimeNanoseconds + nanoseconds
        let start = queue.locked { q -> Bool in
            q.timers.append((deadline, body))
            q.timers.sort { $0.deadline > $1.deadline }
            defer { q.started = true }
            return !q.started
        }
        if start { startThread() }
        wake.signal()  // the loop recomputes how long to wait
    }

    private func pop() -> Work {
        while true {
            // Wait for work or for the soonest timer; a timer that is due runs as a block.
            let due = queue.locked { q -> (Work?, UInt64?) in
                guard let soonest = q.timers.last else { return (nil, nil) }
                if soonest.deadline <= DispatchTime.now().uptimeNanoseconds {
                    q.timers.removeLast()
                    return (.block(soonest.body), nil)
                }
                return (nil, soonest.deadline)
            }
            if let work = due.0 { return work }
            if let deadline = due.1 {
                guard wake.wait(timeout: DispatchTime(uptimeNanoseconds: deadline)) == .success else { continue }
            } else {
                wake.wait()
            }
            // A signal from `schedule` has no item: loop to look at the timers again.
            if let work = takeItem() { return work }
        }
    }

    private func takeItem() -> Work? {
        queue.locked { q in
            guard q.head < q.items.count else { return nil }
            let work = q.items[q.head]
            q.head += 1
            if q.head >= 64 && q.head * 2 >= q.items.count {
                q.items.removeFirst(q.head)
                q.head = 0
            }
            return work
        }
    }

    private func startThread() {
        var handle = pthread_t()
        // The thread holds the executor until it stops.
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&handle, nil, { context in
            guard let context else { return nil }
            let executor = Unmanaged<PersistenceExecutor>.fromOpaque(context).takeRetainedValue()
            executor.runLoop()
            return nil
        }, context)
        precondition(created == 0, "cannot start the settings persistence thread (error \(created))")
        pthread_detach(handle)
    }

    private func runLoop() {
        thread.store(Self.currentThreadID(), ordering: .releasing)
        let executor = asUnownedSerialExecutor()
        while true {
            switch pop() {
            case .job(let job): job.runSynchronously(on: executor)
            case .block(let body): body()
            case .stop: return
            }
        }
    }

    private static func currentThreadID() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
