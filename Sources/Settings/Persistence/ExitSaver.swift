#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Darwin)
import Dispatch
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The save at exit, done by a thread of its own while stores have unsaved changes: the exit
/// hook only wakes it and waits for it with a bound, so the hook allocates nothing and takes no
/// lock. `exit()` may run inside a signal handler that interrupted the allocator (glibc's arena
/// lock held by the very thread that exits) or a store's lock: a hook that allocated there would
/// wait for ever. The thread allocates in its own arena and, when it stalls all the same, the
/// hook gives up at the bound with a message written without allocating.
///
/// The thread starts when a store first gains unsaved changes (``PendingSaves/add(_:)``) and
/// ends a second after none is left, so a process whose stores are all saved keeps no thread.
enum ExitSaver {
    #if canImport(Darwin)
    /// Darwin has no unnamed POSIX semaphores (`sem_init` fails there): Dispatch's, whose signal
    /// neither allocates nor takes a lock either. `[0]` wakes the thread, `[1]` says it is done.
    private static let semaphores = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
    #else
    /// Two POSIX semaphores, made once: `[0]` wakes the thread for the exit save, `[1]` says it
    /// is done. `sem_post` and `sem_timedwait` neither allocate nor take a lock a thread can hold.
    ///
    /// `nonisolated(unsafe)`: the pointer is a constant, set once by the initialiser, and what it
    /// points to is only ever used through `sem_post` and `sem_timedwait`, which POSIX makes safe
    /// to call from any thread at once (that is what a semaphore is for); nothing writes it otherwise.
    nonisolated(unsafe) private static let semaphores: UnsafeMutablePointer<sem_t> = {
        let pair = UnsafeMutablePointer<sem_t>.allocate(capacity: 2)
        sem_init(pair, 0, 0)
        sem_init(pair + 1, 0, 0)
        return pair
    }()
    #endif
    /// ``stopped`` (no thread), ``running`` or ``exiting`` (the hook asked for the save): one
    /// atomic, so the thread's decision to end and the hook's request never cross.
    private static let phase = Atomic(0)
    private static let stopped = 0, running = 1, exiting = 2
    /// Bumped by the thread as the exit save makes progress.
    private static let progress = Atomic(0)
    /// The longest a pending store's save may wait (its lock timeout plus twice its settle
    /// delay), in nanoseconds: what the hook waits beyond the last progress.
    private static let stall = Atomic<Int64>(0)
    /// How long the thread stays once no store has unsaved changes.
    private static let linger: Int64 = 1_000_000_000

    /// Notes the bound of a store that just gained unsaved changes; with PendingSaves' lock held.
    static func noteStall(_ limit: Duration) {
        let ns = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        if ns > stall.load(ordering: .relaxed) { stall.store(ns, ordering: .relaxed) }
    }

    /// Whether the thread must be started (it was not running); with PendingSaves' lock held.
    static func shouldStart() -> Bool {
        phase.compareExchange(expected: stopped, desired: running, ordering: .acquiringAndReleasing).exchanged
    }

    /// Starts the thread (after ``shouldStart()`` said so, outside the lock).
    static func start() {
        _ = semaphores
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { _ in
            ExitSaver.run()
            return nil
        }, nil)
        if started == 0 {
            pthread_detach(thread)
        } else {
            // No thread: the exit save cannot be made safely. Tried again when a store next gains changes.
            _ = phase.compareExchange(expected: running, desired: stopped, ordering: .acquiringAndReleasing)
        }
    }

    /// The thread: waits for the exit hook; a second after no store is pending, it ends.
    private static func run() {
        while true {
            if wait(0, nanoseconds: linger) {
                guard phase.load(ordering: .acquiring) == exiting else { continue }
                progress.add(1, ordering: .releasing)  // awake
                PendingSaves.saveAll(within: nil, when: "at exit") { progress.add(1, ordering: .releasing) }
                post(1)
                return
            }
            let ended = PendingSaves.endSaverIfIdle {
                phase.compareExchange(expected: running, desired: stopped, ordering: .acquiringAndReleasing).exchanged
            }
            if ended { return }
        }
    }

    /// The exit hook: wakes the thread and waits for it, for as long as it makes progress.
    /// Allocates nothing and takes no lock.
    static func saveAtExit() {
        guard phase.compareExchange(expected: running, desired: exiting, ordering: .acquiringAndReleasing).exchanged else {
            return  // no thread: no store has unsaved changes
        }
        post(0)
        // Twice the stores' own bound and five seconds more: the saver reports a stalled store
        // itself well before; this only ends a saver that cannot run at all (a lock the
        // interrupted thread holds), on a machine that may be very busy.
        let bound = stall.load(ordering: .relaxed) * 2 + 5_000_000_000
        var seen = progress.load(ordering: .acquiring)
        while !wait(1, nanoseconds: bound) {
            let now = progress.load(ordering: .acquiring)
            if now == seen {
                let message: StaticString = "settings: warning: exit: the unsaved settings could not be saved in time (exit() called from a signal handler while the thread held the allocator's or a store's lock?); they are lost\n"
                _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
                return
            }
            seen = now
        }
    }

    /// Posts semaphore `index`.
    private static func post(_ index: Int) {
        #if canImport(Darwin)
        semaphores[index].signal()
        #else
        sem_post(semaphores + index)
        #endif
    }

    /// Waits on semaphore `index` for at most `nanoseconds`; `true` when it was posted.
    private static func wait(_ index: Int, nanoseconds: Int64) -> Bool {
        #if canImport(Darwin)
        return semaphores[index].wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success
        #else
        let semaphore = semaphores + index
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let total = Int64(deadline.tv_nsec) + nanoseconds
        deadline.tv_sec += Int(total / 1_000_000_000)
        deadline.tv_nsec = Int(total % 1_000_000_000)
        while sem_timedwait(semaphore, &deadline) != 0 {
            if errno != EINTR { return false }
        }
        return true
        #endif
    }
}
