import Foundation
import Settings

/// `flush()` of one change to a 100-key file (with the default history, and with none), beside
/// `UserDefaults.synchronize()` after one change to a 100-key suite, and beside the limit: a
/// plain POSIX write + fsync + rename (+ directory fsync) of the same bytes. Measured in turn
/// (``Harness/interleavedMedianSeconds(_:)``): the disk's speed drifts more than they differ.
enum PersistenceBenchmarks {
    static func run(_ h: Harness) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "settings-bench-persist-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (initial, store) = try hundredKeyStore(in: directory.appending(path: "history"))
        let bare = try hundredKeyStore(in: directory.appending(path: "none"), historyLimit: 0).store
        var i: Int64 = 0
        var systems: [(String, () throws -> Void)] = [
            ("Settings", {
                i += 1
                store["key1"] = .integer(PlistInteger(i))
                try store.flushNow()
            }),
            ("Settings, historyLimit 0", {
                i += 1
                bare["key1"] = .integer(PlistInteger(i))
                try bare.flushNow()
            }),
        ]
        let limitPath = directory.appending(path: "limit.plist").path
        let bytes = try PlistValue.dictionary(initial).encoded(as: .xml)
        systems.append(("POSIX write+fsync+rename (the limit)", { posixReplace(limitPath, bytes) }))
        let lockedPath = directory.appending(path: "locked.plist").path
        systems.append(("the limit, locked and checked", { lockedReplace(lockedPath, bytes) }))

        setenv("XDG_CONFIG_HOME", directory.path, 1)
        if let defaults = UserDefaults(suiteName: "settings-bench-persist") {
            for (key, value) in initial { defaults.set(value.stringValue ?? value.intValue.map(String.init) ?? "", forKey: key) }
            defaults.synchronize()
            systems.append(("UserDefaults.synchronize()", {
                i += 1
                defaults.set(i, forKey: "key1")
                defaults.synchronize()
            }))
        }
        let seconds = try h.interleavedMedianSeconds(systems.map(\.1))
        for ((system, _), median) in zip(systems, seconds) { record(h, "flush-1-of-100-keys", system, median) }
    }

    /// `--profile-flush N`: only N flushes of one change to a 100-key file (in `$TMPDIR`), for
    /// `perf stat` or callgrind, where a busy machine makes the timed row too noisy to compare.
    static func profileFlush(count: Int, historyLimit: Int = 20) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "settings-bench-profile-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try hundredKeyStore(in: directory, historyLimit: historyLimit).store
        for i in 0..<count {
            store["key1"] = .integer(PlistInteger(Int64(i)))
            try store.flushNow()
        }
    }

    /// A file store over a 100-key file in `directory` (created), and the file's contents;
    /// `historyLimit`: how many generations its saves keep.
    static func hundredKeyStore(in directory: URL, historyLimit: Int = 20) throws -> (initial: PlistDictionary, store: SettingsStore) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var initial = PlistDictionary()
        for i in 0..<100 { initial["key\(i)"] = i % 3 == 0 ? .string("value \(i)") : .integer(PlistInteger(Int64(i))) }
        let url = directory.appending(path: "settings.plist")
        try PlistValue.dictionary(initial).write(to: url)
        var options = PersistenceOptions()
        options.historyLimit = historyLimit
        return (initial, SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored, options: options))
    }

    static func record(_ h: Harness, _ workload: String, _ system: String, _ seconds: Double) {
        h.record(Harness.Result(workload: workload, system: system, value: seconds * 1e6, unit: "us/op", seconds: seconds))
    }

    /// The limit (``posixReplace(_:_:)``) with the least a file that several processes change
    /// needs around it: an advisory lock in a lock file beside it (opened, taken without
    /// waiting, closed after), a look at the file (is it a link, is it still what this writer
    /// last read), and its permissions kept on the new file. No reading, merging or encoding: what
    /// a settings library pays before any work of its own.
    static func lockedReplace(_ path: String, _ bytes: Data) {
        let directory = (path as NSString).deletingLastPathComponent
        let lock = open(directory + "/." + (path as NSString).lastPathComponent + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { return }
        defer { close(lock) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { return }
        var s = stat()
        let existed = lstat(path, &s) == 0
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        bytes.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
        if existed { fchmod(fd, s.st_mode & 0o7777) }
        fsync(fd)
        close(fd)
        rename(temporary, path)
        let dir = open(directory, O_RDONLY | O_DIRECTORY)
        fsync(dir)
        close(dir)
    }

    /// What any crash-safe save must at least do: write a temporary file, fsync it, rename it
    /// over the target and fsync the directory.
    static func posixReplace(_ path: String, _ bytes: Data) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        bytes.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        rename(temporary, path)
        let dir = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY)
        fsync(dir)
        close(dir)
    }
}

/// Whole-process rows: a program that opens a 100-key settings file, reads one value and exits,
/// beside the same through `UserDefaults` and beside an empty Swift program (all built alike,
/// found beside this executable); and 100,000 distinct keys written, then flushed.
enum ProcessBenchmarks {
    static func run(_ h: Harness, quick: Bool) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "settings-bench-process-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var initial = PlistDictionary()
        for i in 0..<100 { initial["key\(i)"] = i % 3 == 0 ? .string("value \(i)") : .integer(PlistInteger(Int64(i))) }
        let url = directory.appending(path: "settings.plist")
        try PlistValue.dictionary(initial).write(to: url)

        let binDir = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        let runs = quick ? 10 : 60
        func startup(_ system: String, _ tool: String, _ arguments: [String], environment: [String: String] = [:]) {
            let path = binDir.appending(path: tool).path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                print("# \(tool) not built beside settings-bench: `swift build -c release --product \(tool)`")
                return
            }
            var times: [Double] = []
            for _ in 0..<runs { times.append(spawnAndWait(path, arguments, environment: environment)) }
            times.sort()
            PersistenceBenchmarks.record(h, "startup-open-read-1-of-100-keys", system, times[times.count / 2])
        }
        startup("Settings", "settings-startup", [url.path, "key1"])
        startup("empty Swift program", "empty-program", [])
        // UserDefaults: the same file as a suite under XDG_CONFIG_HOME (where swift-corelibs-foundation keeps them).
        let suiteDir = directory.appending(path: "xdg")
        let suite = "startup-suite"
        setenv("XDG_CONFIG_HOME", suiteDir.path, 1)
        if let defaults = UserDefaults(suiteName: suite) {
            for (key, value) in initial { defaults.set(value.intValue ?? 0, forKey: key) }
            defaults.synchronize()
        }
        startup("UserDefaults", "settings-bench", ["--startup-child-userdefaults", suite, "key1"],
                environment: ["XDG_CONFIG_HOME": suiteDir.path])

        // Distinct keys written then flushed: timed once per run (one run is seconds at 100,000 keys).
        // UserDefaults is measured at 10,000 keys only (its per-key cost grows with the count).
        func once(_ body: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        var n = 0
        for count in quick ? [10_000] : [10_000, 100_000] {
            let settings = try once {
                n += 1
                let store = SettingsStore.file(directory.appending(path: "many-\(n).plist"), autosaveDelay: nil, externalChanges: .ignored)
                for i in 0..<count { store[SettingsKey("key\(i)")] = .integer(PlistInteger(Int64(i))) }
                try store.flushNow()
            }
            PersistenceBenchmarks.record(h, "write-\(count / 1000)k-distinct-keys-then-flush", "Settings", settings)
            guard count == 10_000 else { continue }
            let defaultsTime = once {
                n += 1
                guard let defaults = UserDefaults(suiteName: "many-\(n)") else { return }
                for i in 0..<count { defaults.set(i, forKey: "key\(i)") }
                defaults.synchronize()
            }
            PersistenceBenchmarks.record(h, "write-\(count / 1000)k-distinct-keys-then-flush", "UserDefaults", defaultsTime)
        }
    }

    /// The child side of the UserDefaults start-up row.
    static func userDefaultsChild(suite: String, key: String) -> Never {
        let value = UserDefaults(suiteName: suite)?.integer(forKey: key) ?? -1
        print(value)
        exit(0)
    }

    /// Runs a program to completion (its output discarded) and returns the wall time in seconds.
    static func spawnAndWait(_ path: String, _ arguments: [String], environment: [String: String]) -> Double {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let start = DispatchTime.now().uptimeNanoseconds
        var pid: pid_t = 0
        guard posix_spawn(&pid, path, &actions, nil, argv, envp) == 0 else { return .nan }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
