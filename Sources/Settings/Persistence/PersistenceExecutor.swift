#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// The one thread every ``SettingsStore`` runs its persistence on: loading, saving, merging,
/// reloading, watching, autosaves and their retries.
///
/// `SettingsStore` is an actor whose executor is this one, so everything isolated to a store runs
/// here, never on Swift's cooperative pool: a slow disk, a stalled network file system or an
/// `fsync` cannot hold up the program's tasks. Nothing here ever waits for another process: a
/// busy file lock is tried without blocking and retried later (see ``SettingsStore/flush()``).
///
/// One thread serves every store (measured: a store's save is a few file system calls, and
/// stores rarely save at the same moment, so a thread per store would only cost memory). The
/// thread starts with the first job and lives as long as the process.
final class PersistenceExecutor: SerialExecutor {
    static let shared = PersistenceExecutor()

    private enum Work: Sendable {
        case job(UnownedJob)
        case block(@Sendable () -> Void)
    }

    private struct Queue: Sendable {
        var items: [Work] = []
        var head = 0
        var started = false
    }

    private let queue = Mutex(Queue())
    /// Counts queued items; the thread waits on it.
    private let wake = DispatchSemaphore(value: 0)
    /// The thread's identity, once it runs (0 before).
    private let thread = Atomic<UInt>(0)

    private init() {}

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

    private func push(_ work: Work) {
        let start = queue.locked { q -> Bool in
            q.items.append(work)
            defer { q.started = true }
            return !q.started
        }
        if start { startThread() }
        wake.signal()
    }

    private func pop() -> Work {
        wake.wait()
        return queue.locked { q in
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
        let created = pthread_create(&handle, nil, { _ in
            PersistenceExecutor.shared.runLoop()
            return nil
        }, nil)
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
