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
/// One thread per busy file store (measured: with one thread shared by all stores, a store saving
/// 40,000 keys held up another store's `flush()` for seconds, past its lock timeout; a thread
/// costs about 60 µs to start and no memory beyond its stack). The thread starts with the
/// store's first job and ends when the store is freed or after ``idleLifetime`` with nothing to
/// do (the next job starts another), so an in-memory store, a file store never used and a file
/// store left idle hold no thread.
///
/// When no thread can be started (`pthread_create` fails: `RLIMIT_NPROC`, the kernel's thread
/// limit, no memory for a stack), nothing crashes and nothing is lost; the failure is reported
/// once through `onStartFailure`, and the queue is run by someone else until it is empty: a
/// caller that waits (``run(_:)``: the first read, `flushNow()`, the exit hook) runs it itself;
/// other work goes to the process's spare thread (``SpareRunner``, started while threads could
/// still be made, once 16 stores have threads), or, when there is none, waits for the next job,
/// which tries a thread of its own again. (Not Dispatch: its workers retry `pthread_create` in a
/// loop on the caller's thread when it fails.)
final class PersistenceExecutor: SerialExecutor {
    private enum Work: Sendable {
        case job(UnownedJob)
        case block(@Sendable () -> Void)
        /// The store is gone: the thread ends once the work queued before this is done.
        case stop
    }

    private struct Queue: Sendable {
        /// Queued work; a slot is emptied when its work is taken, so nothing it captured (the
        /// store itself, often) is kept alive by the queue.
        var items: [Work?] = []
        var head = 0
        /// Whether a runner (the executor's thread, or a borrowed worker) owns the queue.
        var started = false
        /// Whether the store is gone (no runner is started again).
        var stopped = false
        /// Blocks to run once their time comes, soonest last.
        var timers: [(deadline: UInt64, body: @Sendable () -> Void)] = []
        /// Whether the executor's thread waits with nothing to do (set when ``next(idle:borrowed:)``
        /// tells it to wait, cleared when it gives it anything else).
        var runnerWaiting = false
        /// The waiting thread's identity while a caller of ``run(_:)`` runs its block itself
        /// (0 when none does): the thread takes no work meanwhile.
        var lentBy: UInt = 0
    }

    /// How many executor threads run now, in the process.
    static let threads = Atomic<Int>(0)

    /// How long the thread waits for work before it ends (the next job starts a new one).
    static let idleLifetime: Duration = .seconds(10)

    private let queue = Mutex(Queue())
    /// Counts queued items; the thread waits on it.
    private let wake = DispatchSemaphore(value: 0)
    /// The identity of the thread running the queue now (0 when none does).
    private let thread = Atomic<UInt>(0)
    /// Whether a failure to start a thread was reported already (reported once per store).
    private let startFailureReported = Atomic<Bool>(false)
    /// Told (once) when no thread could be started; set by the store.
    let onStartFailure = Mutex<(@Sendable (_ error: Int32) -> Void)?>(nil)

    init() {}

    /// Ends the thread (if it runs) once the work queued so far is done. Called when the store
    /// is freed.
    func stop() {
        let running = queue.locked { q -> Bool in
            q.stopped = true
            return q.started
        }
        if running { push(.stop) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        // The runtime holds no reference to the executor while it enqueues. Once the job is
        // queued and the thread woken, the job can run, end its task, free the store and with it
        // this executor, all before `push` returns (seen: a crash retaining `self` in `push`
        // right after `wake.signal()`). The job's task holds the store until the job runs, so
        // the executor is alive here: hold it until `push` is done with it.
        let held = Unmanaged.passRetained(self)
        defer { held.release() }
        push(.job(UnownedJob(job)))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Called by the runtime when isolation to a store is assumed outside a task (for example by
    /// ``run(_:)``): only the thread running the executor's queue is isolated.
    func checkIsolated() {
        precondition(isCurrent, "settings persistence ran outside its executor thread")
    }

    /// Whether the calling thread is the one running the executor's queue.
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
        if borrowIdleRunner() {
            defer { giveBackIdleRunner() }
            return try body()
        }
        let result = Mutex<Result<T, E>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let runHere = push(.block {
            let outcome = Result { () throws(E) -> T in try body() }
            result.locked { $0 = outcome }
            done.signal()
        }, callerWaits: true)
        if runHere { runBorrowed() }
        waitRunningIfUnowned(done)
        // The block always stores a result before signalling.
        guard let outcome = result.locked({ $0 }) else { preconditionFailure("executor block finished without a result") }
        return try outcome.get()
    }

    /// Makes the calling thread the executor's for one block of ``run(_:)``, when the executor's
    /// own thread waits with nothing queued and no timer due: the block then runs in order (after
    /// everything queued before it, which is nothing) without waking that thread and waiting to be
    /// woken in turn (two thread switches, measured at 25 to 50 µs of a `flushNow()`). The
    /// thread takes no work until ``giveBackIdleRunner()``; what is queued meanwhile runs after.
    private func borrowIdleRunner() -> Bool {
        let me = Self.currentThreadID()
        return queue.locked { q -> Bool in
            guard q.runnerWaiting, q.lentBy == 0, !q.stopped, q.head == q.items.count else { return false }
            if let soonest = q.timers.last, soonest.deadline <= DispatchTime.now().uptimeNanoseconds { return false }
            q.lentBy = thread.load(ordering: .acquiring)
            thread.store(me, ordering: .releasing)
            return true
        }
    }

    /// Gives the executor back to its waiting thread after ``borrowIdleRunner()``, waking it
    /// for what was queued (or a timer scheduled) meanwhile.
    private func giveBackIdleRunner() {
        let woke = queue.locked { q -> Bool in
            thread.store(q.lentBy, ordering: .releasing)
            q.lentBy = 0
            return !q.runnerWaiting
        }
        // A thread that woke meanwhile (work queued, a timer scheduled, its wait over) found the
        // executor lent and waits for this signal; one still asleep has a signal of its own
        // pending for anything that came, or nothing to do.
        if woke { wake.signal() }
    }

    /// ``run(_:)`` for a block with no result: no generic wrapper to instantiate (used on the
    /// start-up path, where each first use of a generic type costs a metadata look-up).
    func runAndWait(_ body: @escaping @Sendable () -> Void) {
        if isCurrent { return body() }
        let done = DispatchSemaphore(value: 0)
        let runHere = push(.block {
            body()
            done.signal()
        }, callerWaits: true)
        if runHere { runBorrowed() }
        waitRunningIfUnowned(done)
    }

    /// Waits for `done`, running the queue here whenever nobody owns it: a push that could not
    /// start a runner releases its claim (``startRunner(callerWaits:)``), and a caller that
    /// pushed meanwhile (finding the queue claimed) would otherwise wait for ever (seen: the
    /// `thread-limit` fault test hung in about one run in ten).
    private func waitRunningIfUnowned(_ done: DispatchSemaphore) {
        while done.wait(timeout: .now() + .milliseconds(10)) == .timedOut {
            if queue.locked({ Self.claim(&$0) }) { runBorrowed() }
        }
    }

    /// Runs `body` on the executor thread without waiting for it (inline when already there).
    func submit(_ body: @escaping @Sendable () -> Void) {
        if isCurrent { return body() }
        push(.block(body))
    }

    /// Queues `work`, starting a runner if none owns the queue. Returns `true` when no runner
    /// could be started and `callerWaits`: the caller then runs the queue itself.
    @discardableResult
    private func push(_ work: Work, callerWaits: Bool = false) -> Bool {
        let start = queue.locked { q -> Bool in
            q.items.append(work)
            return Self.claim(&q)
        }
        wake.signal()
        return start && !startRunner(callerWaits: callerWaits)
    }

    /// Takes the queue for a new runner when none owns it (and the store is not gone).
    private static func claim(_ q: inout Queue) -> Bool {
        guard !q.started, !q.stopped || !q.items.isEmpty else { return false }
        q.started = true
        return true
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
            return Self.claim(&q)
        }
        wake.signal()  // the loop recomputes how long to wait
        if start { _ = startRunner(callerWaits: false) }
    }

    /// What the runner does next.
    private enum Next {
        case work(Work)
        /// Wait for a signal, until the deadline if there is one.
        case wait(until: UInt64?)
        /// Nothing to do: the runner gave the queue up.
        case end
    }

    /// The next piece of work: a queued item, else a timer that is due, else how long to wait.
    /// A runner that finds nothing to do gives the queue up (under the lock, so a concurrent push
    /// starts a new runner) when the store is gone, when `idle` (the thread waited its idle
    /// lifetime), or when `borrowed` and only timers not yet due are left.
    private func next(idle: Bool, borrowed: Bool) -> Next {
        queue.locked { q -> Next in
            if q.lentBy != 0, !borrowed {
                // A caller of `run` runs a block as the executor: nothing else runs meanwhile.
                q.runnerWaiting = false
                return .wait(until: nil)
            }
            let next = Self.take(&q, idle: idle, borrowed: borrowed)
            switch next {
            case .wait: q.runnerWaiting = !borrowed
            case .work: q.runnerWaiting = false
            case .end:
                q.runnerWaiting = false
                thread.store(0, ordering: .releasing)
            }
            return next
        }
    }

    /// ``next(idle:borrowed:)``'s choice, under the queue's lock.
    private static func take(_ q: inout Queue, idle: Bool, borrowed: Bool) -> Next {
        if q.head < q.items.count {
            let work = q.items[q.head]
            q.items[q.head] = nil
            q.head += 1
            if q.head >= 64 && q.head * 2 >= q.items.count {
                q.items.removeFirst(q.head)
                q.head = 0
            }
            if let work { return .work(work) }
        }
        if !q.stopped, let soonest = q.timers.last {
            if soonest.deadline <= DispatchTime.now().uptimeNanoseconds {
                q.timers.removeLast()
                return .work(.block(soonest.body))
            }
            if !borrowed { return .wait(until: soonest.deadline) }
        } else if !q.stopped && !idle && !borrowed {
            return .wait(until: nil)
        }
        if q.stopped { q.timers.removeAll() }
        q.started = false
        return .end
    }

    /// Starts a runner for the queue just claimed: the executor's thread, else the spare
    /// thread. Returns `false` when neither could take it and `callerWaits` (the caller runs it);
    /// otherwise a queue nobody runs is released, for the next job to try again.
    private func startRunner(callerWaits: Bool) -> Bool {
        let error = startThread()
        guard error != 0 else { return true }
        if !startFailureReported.exchange(true, ordering: .acquiringAndReleasing) {
            let report = onStartFailure.locked { $0 }
            report?(error)
        }
        if callerWaits { return false }
        if SpareRunner.shared.take(self) { return true }
        queue.locked { $0.started = false }
        return true
    }

    /// Starts the executor's thread; returns `pthread_create`'s error (0 when it started).
    private func startThread() -> Int32 {
        var handle = pthread_t()
        // The thread holds the executor until it stops.
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&handle, nil, { context in
            guard let context else { return nil }
            let executor = Unmanaged<PersistenceExecutor>.fromOpaque(context).takeRetainedValue()
            if PersistenceExecutor.threads.add(1, ordering: .relaxed).newValue == SpareRunner.threshold {
                SpareRunner.shared.prepare()
            }
            executor.runLoop()
            PersistenceExecutor.threads.subtract(1, ordering: .relaxed)
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<PersistenceExecutor>.fromOpaque(context).release()
            return created
        }
        pthread_detach(handle)
        return 0
    }

    /// The executor's own thread: runs work as it comes, waits for timers, and ends when the
    /// store is gone or after ``idleLifetime`` with nothing to do.
    private func runLoop() {
        thread.store(Self.currentThreadID(), ordering: .releasing)
        let executor = asUnownedSerialExecutor()
        let lifetime = UInt64(Self.idleLifetime.components.seconds) * 1_000_000_000
        var idle = false
        while true {
            switch next(idle: idle, borrowed: false) {
            case .work(.job(let job)): job.runSynchronously(on: executor)
            case .work(.block(let body)): body()
            case .work(.stop): break  // the loop ends once nothing queued is left
            case .wait(let deadline):
                let limit = deadline ?? DispatchTime.now().uptimeNanoseconds + lifetime
                idle = wake.wait(timeout: DispatchTime(uptimeNanoseconds: limit)) == .timedOut && deadline == nil
                continue
            case .end:
                return
            }
            idle = false
        }
    }

    /// Runs the queue on a borrowed thread (the caller's or the spare's, when no thread of its
    /// own could be started) until nothing is queued; timers not yet due wait for the next job.
    func runBorrowed() {
        thread.store(Self.currentThreadID(), ordering: .releasing)
        let executor = asUnownedSerialExecutor()
        while true {
            switch next(idle: true, borrowed: true) {
            case .work(.job(let job)): job.runSynchronously(on: executor)
            case .work(.block(let body)): body()
            case .work(.stop), .wait: continue
            case .end:
                return
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

/// The process's spare persistence thread: runs the queue of a store whose own thread could not
/// be started. It is started while threads can still be made (when the 16th store thread
/// starts), so that a resource limit reached later leaves one thread to fall back on.
final class SpareRunner: Sendable {
    static let shared = SpareRunner()
    /// How many store threads run when the spare is started.
    static let threshold = 16

    private struct State {
        var waiting: [PersistenceExecutor] = []
        /// Whether a thread is being started or runs (at most one is ever started at a time).
        var started = false
        /// Whether the thread runs: only then is a queue handed to it (a queue handed to a
        /// thread that then failed to start would never run).
        var running = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// Starts the spare thread if it is not running (once per process).
    func prepare() {
        let start = state.locked { s -> Bool in
            defer { s.started = true }
            return !s.started
        }
        guard start else { return }
        var handle = pthread_t()
        let created = pthread_create(&handle, nil, { _ in
            SpareRunner.shared.serve()
            return nil
        }, nil)
        if created == 0 {
            pthread_detach(handle)
        } else {
            state.locked { $0.started = false }
        }
    }

    /// Has the spare thread run `executor`'s queue; `false` when there is no spare thread.
    func take(_ executor: PersistenceExecutor) -> Bool {
        let taken = state.locked { s -> Bool in
            guard s.running else { return false }
            s.waiting.append(executor)
            return true
        }
        if taken { wake.signal() }
        return taken
    }

    private func serve() {
        state.locked { $0.running = true }
        while true {
            wake.wait()
            let executor = state.locked { s -> PersistenceExecutor? in s.waiting.isEmpty ? nil : s.waiting.removeFirst() }
            executor?.runBorrowed()
        }
    }
}
