// settings-fault: the writer processes of the fault tests (Tools/fault-tests.py).
//
//   settings-fault crash-writer FILE           sets keys and flushes in a loop, printing each
//                                              counter value whose flush() returned; killed by the test
//   settings-fault saving-writer FILE          sets a counter and flushes in a loop, printing "saving I"
//                                              as each flush begins; killed by the test
//   settings-fault writer FILE PREFIX COUNT    COUNT writes of distinct keys PREFIX-0..., each flushed
//   settings-fault forget-and-exit FILE COUNT  COUNT stores on FILE, each set one key and was dropped
//                                              at once; then exit(0) without a flush
//   settings-fault thread-limit DIR COUNT      under RLIMIT_NPROC (as user nobody when root), COUNT stores
//                                              in DIR/i/ each write a key and flushNow(); prints "saved COUNT"
//   settings-fault term-writer FILE save|save30|default
//                                              (save: SettingsStore.saveOnTermination(), save30: with a
//                                              30 s timeout, writing once a millisecond) writes a counter
//                                              in a loop, printing each value written; stopped by a signal
//   settings-fault exit-in-signal FILE         writes a key, then calls exit(0) from a SIGUSR1 handler
//                                              while the store's lock is held (raised inside applyToUserLayer)
//   settings-fault exit-in-malloc FILE         writes a key, then allocates and frees in a loop on the
//                                              main thread until another thread's SIGUSR1 lands there;
//                                              its handler calls exit(0) (most often inside malloc,
//                                              with the allocator's lock held)
//   settings-fault exit-many DIR COUNT         COUNT stores, one file each in DIR, each with an unsaved
//                                              change; then exit(0) (the exit hook saves them)
//   settings-fault lifetime DIR COUNT          COUNT stores in DIR/i/, each read, written, flushed and
//                                              watched, then dropped; prints the threads, descriptors and
//                                              inotify watches of the process before, at the peak and after
//                                              (exit 0 once none is above before, 1 if not within 120 s)
//   settings-fault defaults-writer SUITE PREFIX COUNT
//                                              the same through UserDefaults(suiteName:) + synchronize()
//   settings-fault model-edit FILE FIELD VALUE loads a model file (fields `name` and `theme`), prints
//                                              "loaded", waits for a line on standard input, sets
//                                              FIELD to VALUE, saves, prints "saved"
//   settings-fault admin-watch APP KEY         the store of APP at its default place (reading the
//                                              administrator's files of $XDG_CONFIG_DIRS); prints
//                                              "ready VALUE WRITABLE", then "change ORIGIN VALUE WRITABLE"
//                                              for each change of KEY, with "refused ERROR" after it
//                                              when a write of KEY is refused; "diagnostic TEXT" for
//                                              each diagnostic; runs until killed
//   settings-fault model-churn DIR COUNT       loads and saves COUNT model files of 100 KB in DIR,
//                                              keeping no model; prints the resident set size (KiB)
//                                              before and after
import Foundation
import Settings
#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("settings-fault: \(message)\n".utf8))
    exit(2)
}

var args = Array(CommandLine.arguments.dropFirst())
guard let mode = args.first else { fail("usage: settings-fault crash-writer|writer|forget-and-exit|thread-limit|term-writer|exit-in-signal|exit-many|defaults-writer ...") }
args.removeFirst()

switch mode {
case "crash-writer":
    guard args.count == 1 else { fail("usage: settings-fault crash-writer FILE") }
    let store = SettingsStore.file(URL(filePath: args[0]), autosaveDelay: .milliseconds(1), externalChanges: .ignored)
    let start = store["counter"]?.intValue ?? 0
    FileHandle.standardOutput.write(Data("start \(start)\n".utf8))
    var i = start
    while true {
        i += 1
        store["counter"] = .integer(PlistInteger(Int64(i)))
        store[SettingsKey("k\(i % 200)")] = .integer(PlistInteger(Int64(i)))
        store[SettingsKey("Nested/k\(i % 7)")] = .string(String(repeating: "x", count: i % 300))
        if i % 3 == 0 {
            do {
                try await store.flush()
            } catch {
                fail("\(error)")
            }
            FileHandle.standardOutput.write(Data("\(i)\n".utf8))  // unbuffered: the test reads it at once
        }
    }
case "saving-writer":
    // Prints "saving I" as each save of counter I begins: a kill after that line lands inside
    // the save (its record step, its replace), where a killed writer's traces are left.
    guard args.count == 1 else { fail("usage: settings-fault saving-writer FILE") }
    let store = SettingsStore.file(URL(filePath: args[0]), autosaveDelay: nil, externalChanges: .ignored)
    var i = store["counter"]?.intValue ?? 0
    while true {
        i += 1
        store["counter"] = .integer(PlistInteger(Int64(i)))
        FileHandle.standardOutput.write(Data("saving \(i)\n".utf8))
        do {
            try await store.flush()
        } catch {
            fail("\(error)")
        }
    }
case "writer":
    // HISTORY-LIMIT (default: the store's): what the several-writers measurement
    // (Tools/fault-tests.py cpu) compares history's cost with.
    guard args.count == 3 || args.count == 4, let count = Int(args[2]),
          let limit = args.count == 4 ? Int(args[3]) : PersistenceOptions().historyLimit else { fail("usage: settings-fault writer FILE PREFIX COUNT [HISTORY-LIMIT]") }
    let store = SettingsStore.file(URL(filePath: args[0]), externalChanges: .ignored, options: PersistenceOptions(historyLimit: limit))
    for i in 0..<count {
        store[SettingsKey("\(args[1])-\(i)")] = .integer(PlistInteger(Int64(i)))
        do {
            try await store.flush()
        } catch {
            fail("\(error)")
        }
    }
case "forget-and-exit":
    guard args.count == 2, let count = Int(args[1]) else { fail("usage: settings-fault forget-and-exit FILE COUNT") }
    func writeAndForget(_ i: Int) {
        let store = SettingsStore.file(URL(filePath: args[0]), autosaveDelay: .seconds(60), externalChanges: .ignored)
        store[SettingsKey("k\(i)")] = .integer(PlistInteger(Int64(i)))
    }
    for i in 0..<count { writeAndForget(i) }
    exit(0)
case "thread-limit":
    guard args.count == 2, let count = Int(args[1]) else { fail("usage: settings-fault thread-limit DIR COUNT") }
    // Threads of this process and a few more; root is not subject to RLIMIT_NPROC, nobody is.
    let running = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 8
    var limit = rlimit(rlim_cur: rlim_t(running + 4), rlim_max: rlim_t(running + 4))
    guard setrlimit(__rlimit_resource_t(__RLIMIT_NPROC.rawValue), &limit) == 0 else { fail("setrlimit: \(errno)") }
    if getuid() == 0 {
        guard setgid(65534) == 0, setuid(65534) == 0 else { fail("cannot become nobody: \(errno)") }
    }
    var stores: [SettingsStore] = []
    for i in 0..<count {
        let store = SettingsStore.file(URL(filePath: args[0]).appending(path: "\(i)/settings.plist"), externalChanges: .ignored)
        store["k"] = .integer(PlistInteger(Int64(i)))
        do {
            try store.flushNow()
        } catch {
            fail("\(error)")
        }
        stores.append(store)
    }
    FileHandle.standardOutput.write(Data("saved \(stores.count)\n".utf8))
    exit(0)
case "term-writer":
    guard args.count == 2 else { fail("usage: settings-fault term-writer FILE save|save30|default") }
    // A program started the ordinary way: the test runner may itself run with SIGINT ignored
    // (a shell's background job), which its children inherit. Kept only when a test asks for it.
    if ProcessInfo.processInfo.environment["SETTINGS_FAULT_KEEP_SIGNALS"] == nil {
        for number in [SIGTERM, SIGINT, SIGHUP] { signal(number, SIG_DFL) }
    }
    if args[1] == "save" { SettingsStore.saveOnTermination() }
    if args[1] == "save30" { SettingsStore.saveOnTermination(timeout: .seconds(30)) }
    let store = SettingsStore.file(URL(filePath: args[0]), externalChanges: .ignored)
    var i = 0
    let paced = args[1] == "save30"  // a program that writes now and then, not flat out: its signals and saves are what is tested
    while true {
        i += 1
        store["counter"] = .integer(PlistInteger(Int64(i)))
        FileHandle.standardOutput.write(Data("\(i)\n".utf8))  // acknowledged: the write returned
        if paced { usleep(1_000) }
    }
case "exit-in-signal":
    guard args.count == 1 else { fail("usage: settings-fault exit-in-signal FILE") }
    signal(SIGUSR1) { _ in exit(0) }
    var usr1 = sigset_t()
    sigemptyset(&usr1)
    sigaddset(&usr1, SIGUSR1)
    pthread_sigmask(SIG_UNBLOCK, &usr1, nil)  // a mask inherited from the parent may block it
    let store = SettingsStore.file(URL(filePath: args[0]), autosaveDelay: nil, externalChanges: .ignored)
    store["before"] = 1
    store.applyToUserLayer([("during", 2)]) { _, _ in
        raise(SIGUSR1)  // exit() runs here, on a thread that holds the store's lock
        return true
    }
    fail("still running after exit()")
case "exit-in-malloc":
    guard args.count == 1 else { fail("usage: settings-fault exit-in-malloc FILE") }
    let store = SettingsStore.file(URL(filePath: args[0]), autosaveDelay: nil, externalChanges: .ignored)
    store["k"] = 1
    signal(SIGUSR1) { _ in exit(0) }
    var usr1 = sigset_t()
    sigemptyset(&usr1)
    sigaddset(&usr1, SIGUSR1)
    pthread_sigmask(SIG_UNBLOCK, &usr1, nil)
    let mainThread = pthread_self()
    Thread {
        usleep(UInt32.random(in: 20_000...60_000))
        pthread_kill(mainThread, SIGUSR1)
    }.start()
    var total = 0
    while true {
        var scratch = [Int]()
        scratch.reserveCapacity(Int.random(in: 1...8192))  // malloc and free, again and again
        scratch.append(total)
        total &+= scratch.count
    }
case "exit-many":
    guard args.count == 2, let count = Int(args[1]) else { fail("usage: settings-fault exit-many DIR COUNT") }
    func writeAndForget(_ i: Int) {
        let store = SettingsStore.file(URL(filePath: args[0]).appending(path: "\(i).plist"), autosaveDelay: nil, externalChanges: .ignored)
        store["k"] = .integer(PlistInteger(Int64(i)))
    }
    for i in 0..<count { writeAndForget(i) }
    exit(0)
case "lifetime":
    guard args.count == 2, let count = Int(args[1]) else { fail("usage: settings-fault lifetime DIR COUNT") }
    _ = nice(19)  // thousands of threads: let the tests running beside this one go first
    struct Resources: CustomStringConvertible {
        var threads = 0, descriptors = 0, watches = 0
        var description: String { "threads \(threads) descriptors \(descriptors) watches \(watches)" }
        static func now() -> Resources {
            let fm = FileManager.default
            var r = Resources()
            r.threads = (try? fm.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
            let fds = (try? fm.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            r.descriptors = fds.count
            for fd in fds where (try? fm.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) == "anon_inode:inotify" {
                let info = (try? String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8)) ?? ""
                r.watches += info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
            }
            return r
        }
    }
    /// Waits (polling, at most `limit` seconds: a hang limit) until `condition` holds.
    func waitUntil(_ limit: Double, _ condition: () -> Bool) -> Bool {
        let start = Date()
        while !condition() {
            if Date().timeIntervalSince(start) > limit { return false }
            usleep(10_000)
        }
        return true
    }
    func useStores(_ range: Range<Int>, then keep: ([SettingsStore]) async -> Void) async {
        var stores: [SettingsStore] = []
        for i in range {
            let store = SettingsStore.file(URL(filePath: args[0]).appending(path: "\(i)/settings.plist"))
            _ = store["k"]
            store["k"] = .integer(PlistInteger(Int64(i)))
            stores.append(store)
        }
        do {
            try await SettingsStore.flushAll(timeout: .seconds(600))
        } catch {
            fail("\(error)")
        }
        await keep(stores)
    }
    // Warm-up: the process-wide parts (the watcher's descriptor and thread, the spare thread)
    // are made once and kept; the baseline is taken after them.
    await useStores(0..<20) { stores in
        _ = waitUntil(120) { Resources.now().watches >= stores.count }
    }
    _ = waitUntil(120) { Resources.now().watches == 0 }
    let before = Resources.now()
    FileHandle.standardOutput.write(Data("before \(before)\n".utf8))
    await useStores(20..<(20 + count)) { stores in
        _ = waitUntil(120) { Resources.now().watches >= before.watches + stores.count }
        FileHandle.standardOutput.write(Data("peak \(Resources.now())\n".utf8))
    }
    // Threads may end below the baseline (idle workers of the runtime end too).
    let back = waitUntil(120) {
        let now = Resources.now()
        return now.threads <= before.threads && now.descriptors <= before.descriptors && now.watches == before.watches
    }
    FileHandle.standardOutput.write(Data("after \(Resources.now())\n".utf8))
    exit(back ? 0 : 1)
case "defaults-writer":
    guard args.count == 3, let count = Int(args[2]) else { fail("usage: settings-fault defaults-writer SUITE PREFIX COUNT") }
    guard let defaults = UserDefaults(suiteName: args[0]) else { fail("no suite \(args[0])") }
    for i in 0..<count {
        defaults.set(i, forKey: "\(args[1])-\(i)")
        defaults.synchronize()
    }
case "admin-watch":
    guard args.count == 2 else { fail("usage: settings-fault admin-watch APP KEY") }
    let say: @Sendable (String) -> Void = { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    SettingsDiagnostics.handler = { say("diagnostic \($0.message)") }
    let store = SettingsStore.file(SettingsStore.defaultFileURL(application: args[0]))
    let key = SettingsKey(args[1])
    // The value and writability looked at once per line: the next administrator's edit may
    // land between two looks, and the write below follows what the line said.
    func state(_ writable: Bool) -> String { "\(store[key].map { "\($0)" } ?? "nil") \(writable)" }
    let changes = store.changes
    say("ready \(state(store.isWritable(key)))")
    for await change in changes where change.affects(key) {
        let writable = store.isWritable(key)
        say("change \(change.origin.rawValue) \(state(writable))")
        if !writable {
            do {
                try store.set("from-the-program", for: key)
                say("written")
            } catch {
                say("refused \(error)")
            }
        }
    }
case "model-edit":
    guard args.count == 3, ["name", "theme"].contains(args[1]) else { fail("usage: settings-fault model-edit FILE name|theme VALUE") }
    let url = URL(filePath: args[0])
    do {
        var profile = try SharedProfile.load(from: url)
        FileHandle.standardOutput.write(Data("loaded\n".utf8))
        _ = readLine()
        if args[1] == "name" { profile.name = args[2] } else { profile.theme = args[2] }
        try profile.save(to: url)
        FileHandle.standardOutput.write(Data("saved\n".utf8))
    } catch {
        fail("\(error)")
    }
case "model-churn":
    guard args.count == 2, let count = Int(args[1]) else { fail("usage: settings-fault model-churn DIR COUNT") }
    func residentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
    let before = residentKiB()
    let padding = String(repeating: "x", count: 100_000)
    do {
        for i in 0..<count {
            let url = URL(filePath: args[0]).appending(path: "m\(i).plist")
            try PlistValue.dictionary(["name": .string(padding)]).write(to: url)
            var profile = try SharedProfile.load(from: url)
            profile.theme = "t\(i)"
            try profile.save(to: url)
        }
    } catch {
        fail("\(error)")
    }
    print("rss-before-kib \(before) rss-after-kib \(residentKiB())")
default:
    fail("unknown mode \(mode)")
}

/// The model file two `model-edit` processes share.
struct SharedProfile: SettingsModel, Codable {
    var name = "Guest"
    var theme = "light"
}
