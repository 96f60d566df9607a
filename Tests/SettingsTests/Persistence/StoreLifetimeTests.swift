import Foundation
@testable import Settings
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a store costs and gives back, and what happens when the process ends.
@Suite("Store lifetime and termination")
struct StoreLifetimeTests {
    // Freed stores give back their thread and their watch.

    @Test func tenThousandUsedStoresGiveBackTheirThreadsDescriptorsAndWatches() async throws {
        let dir = try TemporaryDirectory()
        let run = try await Fault.finished(["lifetime", dir.url.path, "10000"], within: .seconds(900))
        #expect(!run.hung)
        let output = run.lines
        let peak = try #require(output.first { $0.hasPrefix("peak ") })
        let before = try #require(output.first { $0.hasPrefix("before ") })
        #expect(peak.hasSuffix("watches \(10_000 + (Int(before.split(separator: " ").last ?? "") ?? 0))"), "\(output)")
        #expect(run.status == 0, "\(output)")  // all back to the baseline
    }

    @Test func aThreadThatCannotBeStartedIsReportedNotACrash() async throws {
        let dir = try TemporaryDirectory()
        chmod(dir.url.path, 0o777)  // the child runs as nobody, where RLIMIT_NPROC applies
        let run = try await Fault.finished(["thread-limit", dir.url.path, "30"])
        #expect(!run.hung)
        #expect(!run.endedBySignal)
        #expect(run.status == 0)
        #expect(run.lines == ["saved 30"])
        #expect(run.stderr.contains("cannot start the settings persistence thread (Resource temporarily unavailable)"))
        for i in [0, 29] {
            #expect(try PlistValue(contentsOf: dir.url.appending(path: "\(i)/settings.plist")) == ["k": .integer(PlistInteger(Int64(i)))])
        }
    }

    // Termination. Each test's writer is started, read, signalled and finished on one thread of
    // its own (`offThePool`), which returns what the test asserts.

    @Test func sigtermAfterSaveOnTerminationKeepsEveryAcknowledgedWrite() async throws {
        for signal in [SIGTERM, SIGINT, SIGHUP] {
            let dir = try TemporaryDirectory()
            let (printed, end) = try await Fault.signalled(["term-writer", dir.file().path, "save"], with: signal, after: 2000)
            #expect(printed.count == 2000)
            // Every write printed before the signal is sent was acknowledged before it.
            let acknowledged = try #require(printed.last.flatMap { Int($0) })
            #expect(!end.hung)
            #expect(end.endedBySignal)   // the default action still ends it
            #expect(end.status == signal)
            let saved = try PlistValue(contentsOf: dir.file())["counter"]?.intValue ?? 0
            #expect(saved >= acknowledged, "signal \(signal): \(acknowledged) acknowledged, \(saved) saved")
        }
    }

    /// The termination save waits for another process's lock as long as the caller allowed
    /// (issue 28, item 11: it gave up after the store's own 2 s lock timeout).
    @Test func theTerminationTimeoutReachesTheWaitForAnotherProcesssLock() async throws {
        let dir = try TemporaryDirectory()
        let lock = try ForeignLock(for: dir.file())
        let file = dir.file().path, fd = lock.fd
        // On a thread of its own: on a busy machine this test's own continuation may wait for one
        // of Swift's few pool threads far longer than the child's 30 s.
        let (printed, end) = try await offThePool { Result { () throws -> ([String], ProgramOutput) in
            let writer = try Fault.start(["term-writer", file, "save30"])
            let printed = writer.lines(200, within: .seconds(120))
            writer.signal(SIGTERM)
            // Another process holds the lock for 3.5 s after the signal: the fault, not a wait for it.
            usleep(3_500_000)
            close(fd)
            return (printed, writer.finish(within: .seconds(60)))
        } }.get()
        #expect(printed.count == 200)
        let acknowledged = try #require(printed.last.flatMap { Int($0) })
        #expect(!end.hung)
        #expect(end.endedBySignal)
        #expect(end.status == SIGTERM)
        let saved = (try? PlistValue(contentsOf: dir.file()))?["counter"]?.intValue ?? 0
        #expect(saved >= acknowledged, "\(acknowledged) acknowledged, \(saved) saved; stderr: \(end.stderr)")
    }

    /// While the termination save waits, a second signal ends the process at once.
    @Test func aSecondSignalEndsTheProcessWhileItSaves() async throws {
        let dir = try TemporaryDirectory()
        let lock = try ForeignLock(for: dir.file())
        defer { lock.release() }
        let file = dir.file().path
        // Signals and the clock on a thread of their own: the time measured is the child's, not
        // the wait of this test's continuation for a pool thread on a busy machine.
        let (printed, handled, took, end) = try await offThePool { Result { () throws -> (Int, Bool, Duration, ProgramOutput) in
            let writer = try Fault.start(["term-writer", file, "save30"])
            let printed = writer.lines(100, within: .seconds(120)).count
            writer.signal(SIGTERM)
            // Handled, not the default action: half a second later it still runs (saving, and
            // waiting for the lock another process holds).
            usleep(500_000)
            let handled = writer.isRunning
            let start = ContinuousClock.now
            // Until the child ends (bounded).
            while writer.isRunning, ContinuousClock.now - start < .seconds(20) {
                writer.signal(SIGINT)
                usleep(50_000)
            }
            let took = ContinuousClock.now - start
            return (printed, handled, took, writer.finish(within: .seconds(60)))
        } }.get()
        #expect(printed == 100)
        #expect(handled, "the first signal ended the process at once: it was not handled")
        #expect(!end.hung)
        #expect(end.endedBySignal)
        // Whichever of the two the process received second ends it (the sources' order of
        // delivery on a busy machine is not the order they were sent in).
        #expect([SIGINT, SIGTERM].contains(end.status), "stderr: \(end.stderr)")
        #expect(took < .seconds(20), "stderr: \(end.stderr)")
    }

    /// A signal the program inherited as ignored stays ignored (issue 28, item 14).
    @Test func aSignalInheritedAsIgnoredStaysIgnored() async throws {
        let dir = try TemporaryDirectory()
        let file = dir.file().path
        let (before, after, running, end) = try await offThePool { Result { () throws -> (Int, [String], Bool, ProgramOutput) in
            let writer = try Fault.start(["term-writer", file, "save"], ignoring: ["HUP"])
            let before = writer.lines(100, within: .seconds(120)).count
            writer.signal(SIGHUP)
            let after = writer.lines(2000, within: .seconds(120))
            let running = writer.isRunning
            writer.signal(SIGTERM)  // still handled: saves, then ends
            return (before, after, running, writer.finish(within: .seconds(120)))
        } }.get()
        #expect(before == 100)
        #expect(after.count == 2000, "the program ended at SIGHUP, which it inherited as ignored")
        #expect(running)
        let acknowledged = try #require(after.last.flatMap { Int($0) })
        #expect(!end.hung)
        #expect(end.status == SIGTERM)  // not SIGHUP's
        #expect((try PlistValue(contentsOf: dir.file())["counter"]?.intValue ?? 0) >= acknowledged)
    }

    /// `exit()` from a signal handler that interrupted the allocator: the exit hook allocates
    /// nothing (the save runs on the exit saver's thread), so the process ends, and saves when
    /// that thread can (issue 28, item 13: the hook's allocation waited for ever on the allocator's lock).
    @Test func exitFromASignalHandlerThatInterruptedTheAllocatorEnds() async throws {
        for _ in 0..<12 {
            let dir = try TemporaryDirectory()
            let run = try await Fault.finished(["exit-in-malloc", dir.file().path], within: .seconds(60))
            #expect(!run.hung, "hung at exit")
            #expect(!run.endedBySignal)
            #expect(run.status == 0)
            // Saved on the exit saver's thread, unless the interrupted thread holds a lock that
            // thread needs too (the allocator's, the runtime's): then the hook gives up at its
            // bound and says so. Either way the process ends.
            // Not asserted: whether it saved (usually), or gave up and said so.
        }
    }

    @Test func exitFromASignalHandlerWithTheStoreLockHeldEndsAndSaysWhy() async throws {
        let dir = try TemporaryDirectory()
        let run = try await Fault.finished(["exit-in-signal", dir.file().path], within: .seconds(60))
        #expect(!run.hung)   // before: hung for ever
        #expect(!run.endedBySignal)
        #expect(run.status == 0)
        #expect(run.stderr.contains("the store's lock is held by the thread that is ending the process"))
    }

    @Test func exitSavesFiveThousandStoresOfOneFileInOneWrite() async throws {
        let dir = try TemporaryDirectory()
        let run = try await Fault.finished(["forget-and-exit", dir.file().path, "5000"])
        #expect(!run.hung)
        #expect(run.status == 0)
        let saved = try #require(try? PlistValue(contentsOf: dir.file()), "not saved; stderr: \(run.stderr)")
        #expect(saved.dictionaryValue?.count == 5000)
    }

    @Test func exitSavesStoresOfManyFilesTogether() async throws {
        let dir = try TemporaryDirectory()
        let run = try await Fault.finished(["exit-many", dir.url.path, "300"])
        #expect(!run.hung)
        #expect(run.status == 0)
        for i in [0, 150, 299] {
            #expect(try PlistValue(contentsOf: dir.url.appending(path: "\(i).plist")) == ["k": .integer(PlistInteger(Int64(i)))])
        }
    }

    // flushAll(timeout:)

    @Test func flushAllNamesTheStoreItCouldNotSaveAndSavesTheOthers() async throws {
        let dir = try TemporaryDirectory()
        let lockedURL = dir.file("locked.plist")
        let locked = SettingsStore.file(lockedURL, autosaveDelay: nil, externalChanges: .ignored,
                                        options: PersistenceOptions(lockTimeout: .milliseconds(100)))
        let free = SettingsStore.file(dir.file("free.plist"), autosaveDelay: nil, externalChanges: .ignored)
        locked["a"] = 1
        free["b"] = 2
        let lock = try ForeignLock(for: lockedURL)
        let error = await #expect(throws: SettingsError.self) { try await SettingsStore.flushAll(timeout: .seconds(60)) }
        #expect(error?.description.contains(lockedURL.path) == true)
        #expect(try PlistValue(contentsOf: dir.file("free.plist")) == ["b": 2])
        #expect(!FileManager.default.fileExists(atPath: lockedURL.path))
        // Its changes were kept, and are saved once the lock is free. (Not asked through
        // `hasUnsavedChanges`: flushAll covers every store of the process, and another test's
        // round may be saving this store's changes at that very moment, seen once in a full run.)
        lock.release()
        try await locked.flush()
        #expect(try PlistValue(contentsOf: lockedURL) == ["a": 1])
    }

    @Test(.timeLimit(hangLimit)) func flushAllReturnsWithinItsTimeoutAndSaysWhatIsStillSaving() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        // The store waits an hour for the lock, so however late a busy machine runs the timer,
        // its save is still waiting when flushAll's time is up.
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(lockTimeout: .seconds(3600)))
        store["a"] = 1
        let lock = try ForeignLock(for: url)
        let error = await #expect(throws: SettingsError.self) { try await SettingsStore.flushAll(timeout: .milliseconds(200)) }
        #expect(error?.description.contains("\(url.path): still saving") == true, "\(String(describing: error))")
        lock.release()
        try await store.flush()   // the changes were kept
        #expect(try PlistValue(contentsOf: url) == ["a": 1])
    }

    @Test func aStoreDroppedWithUnsavedChangesIsKeptAliveUntilTheyAreSaved() async throws {
        let dir = try TemporaryDirectory()
        weak var weakStore: SettingsStore?
        func writeAndForget(_ i: Int, autosave: Duration?) {
            let store = SettingsStore.file(dir.file(), autosaveDelay: autosave, externalChanges: .ignored)
            store[SettingsKey("k\(i)")] = .integer(PlistInteger(Int64(i)))
            if i == 0 { weakStore = store }
        }
        for i in 0..<50 { writeAndForget(i, autosave: i.isMultiple(of: 2) ? .seconds(60) : nil) }
        #expect(weakStore != nil)  // still alive: it has unsaved changes
        do {
            try await SettingsStore.flushAll()
        } catch {
            // flushAll covers every store of the process: other tests' stores may fail on purpose.
            #expect(!error.description.contains(dir.url.path), "\(error)")
        }
        let saved = try #require(try PlistValue(contentsOf: dir.file()).dictionaryValue)
        #expect(saved.count == 50)
        #expect(saved["k49"] == 49)
    }

    @Test func aProcessThatDropsItsStoresAndExitsLosesNothing() throws {
        let dir = try TemporaryDirectory()
        let result = try Fault.run(["forget-and-exit", dir.file().path, "50"])
        #expect(result.status == 0, "\(result.stderr)")
        let saved = try #require(try PlistValue(contentsOf: dir.file()).dictionaryValue)
        #expect(saved.count == 50)
    }
}
