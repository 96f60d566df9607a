// SettingsProvider against swift-configuration's own providers, in the same run. Build in release:
//
//   swift run -c release settings-config-bench            # --quick for a smoke run, --only watches
//
// - reads: `ConfigReader.int(forKey:)` over `InMemoryProvider` and over `SettingsProvider` on an
//   in-memory store, on a file store with two layers (registered defaults under the user's file),
//   and for a missing key read with a default;
// - snapshots: `snapshot()` then one read, at 10, 1,000 and 10,000 top-level keys, beside
//   `InMemoryProvider`;
// - watches: the cost of one change to a watched key with 100 idle watchers on other keys, beside
//   `MutableInMemoryProvider`.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc  // exit
#endif
import Configuration
import Settings
import SettingsConfiguration
import SettingsPlist

let quick = CommandLine.arguments.contains("--quick")
/// `--only reads|snapshots|watches` runs one section.
let sections: Set<String> = CommandLine.arguments.firstIndex(of: "--only").flatMap { index in
    index + 1 < CommandLine.arguments.count ? [CommandLine.arguments[index + 1]] : nil
} ?? ["reads", "snapshots", "watches"]
let reads = quick ? 2_000 : 100_000
let rounds = quick ? 2 : Int(CommandLine.arguments.firstIndex(of: "--rounds").map { CommandLine.arguments[$0 + 1] } ?? "") ?? 7
let clock = ContinuousClock()

/// The time of one run of `body`, averaged over `count` runs.
func time(_ count: Int, _ body: (Int) -> Void) -> Duration {
    let start = clock.now
    for i in 0..<count { body(i) }
    return (clock.now - start) / count
}

/// The median of `rounds` interleaved rounds of each case (so that a busy machine slows all alike).
func interleaved(_ cases: [() -> Duration]) -> [Duration] {
    var times = Array(repeating: [Duration](), count: cases.count)
    for _ in 0..<rounds {
        for (i, run) in cases.enumerated() { times[i].append(run()) }
    }
    return times.map { $0.sorted()[$0.count / 2] }
}

/// One row: the name, the time, and the ratio to `base`.
func report(_ name: String, _ time: Duration, against base: Duration) {
    let padded = name + String(repeating: " ", count: max(0, 52 - name.count))
    print("  \(padded)\(format(time))   \(((time / base) * 100).rounded() / 100)x")
}

/// `123.4 ns`, or `12.3 µs` from 10 µs up.
func format(_ d: Duration) -> String {
    let ns = Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
    return ns < 10_000 ? "\((ns * 10).rounded() / 10) ns" : "\((ns / 100).rounded() / 10) µs"
}

// MARK: Reads

/// `reads` reads of `key` through `reader`, checked against `expected`.
func readTime(_ reader: ConfigReader, _ key: String = "http.port", expected: Int = 8080) -> Duration {
    var sum = 0
    let t = time(reads) { _ in sum &+= reader.int(forKey: ConfigKey(key), default: 7) }
    precondition(sum == expected &* reads, "every read of \(key) saw \(expected)")
    return t
}

let directory = FileManager.default.temporaryDirectory.appending(path: "settings-config-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let fileURL = directory.appending(path: "settings.plist")
let writer = SettingsStore.file(fileURL)
writer["http/port"] = 8080
try await writer.flush()
let fileStore = SettingsStore.file(fileURL)
fileStore.register(defaults: ["http": ["port": 80, "host": "localhost"], "log": ["level": "info"]])

let inMemory = ConfigReader(provider: InMemoryProvider(values: ["http.port": 8080]))
let settingsInMemory = ConfigReader(provider: SettingsProvider(store: .inMemory(["http": ["port": 8080]])))
let settingsFile = ConfigReader(provider: SettingsProvider(store: fileStore))

// `--profile-read N`: N reads through SettingsProvider on the in-memory store, nothing else (for
// callgrind or perf: compare with `--profile-read-base N`, the same over InMemoryProvider).
if let flag = CommandLine.arguments.firstIndex(where: { $0.hasPrefix("--profile-read") }),
   flag + 1 < CommandLine.arguments.count, let count = Int(CommandLine.arguments[flag + 1]) {
    let reader = CommandLine.arguments[flag] == "--profile-read-base" ? inMemory : settingsInMemory
    var sum = 0
    for _ in 0..<count { sum &+= reader.int(forKey: "http.port", default: 7) }
    print(sum)
    exit(0)
}

if sections.contains("reads") {
    let readTimes = interleaved([
        { readTime(inMemory) },
        { readTime(settingsInMemory) },
        { readTime(settingsFile) },
        { readTime(inMemory, "http.missing", expected: 7) },
        { readTime(settingsInMemory, "http.missing", expected: 7) },
        { readTime(settingsFile, "http.missing", expected: 7) },
    ])
    print("ConfigReader.int(forKey:), median of \(rounds) interleaved rounds of \(reads) reads each:")
    report("InMemoryProvider", readTimes[0], against: readTimes[0])
    report("SettingsProvider, in-memory store", readTimes[1], against: readTimes[0])
    report("SettingsProvider, file store (defaults + user file)", readTimes[2], against: readTimes[0])
    print("a missing key, with a default:")
    report("InMemoryProvider", readTimes[3], against: readTimes[3])
    report("SettingsProvider, in-memory store", readTimes[4], against: readTimes[3])
    report("SettingsProvider, file store (defaults + user file)", readTimes[5], against: readTimes[3])
}

// MARK: Snapshots

if sections.contains("snapshots") {
    print("snapshot() then one read (median of \(rounds) interleaved rounds):")
    for size in quick ? [10, 1_000] : [10, 1_000, 10_000] {
        var configValues: [AbsoluteConfigKey: ConfigValue] = [:]
        var plist = PlistDictionary(minimumCapacity: size)
        for i in 0..<size {
            configValues[AbsoluteConfigKey(["key\(i)"])] = ConfigValue(.int(i), isSecret: false)
            plist["key\(i)"] = .integer(PlistInteger(Int64(i)))
        }
        let key = AbsoluteConfigKey(["key3"])
        let base = InMemoryProvider(values: configValues)
        let provider = SettingsProvider(store: .inMemory(plist))
        let count = quick ? 20 : (size >= 10_000 ? 200 : 2_000)
        func snapshotTime(_ provider: some ConfigProvider) -> Duration {
            time(count) { _ in
                let value = try? provider.snapshot().value(forKey: key, type: .int).value?.content
                precondition(value == .int(3), "the snapshot has the value")
            }
        }
        let times = interleaved([{ snapshotTime(base) }, { snapshotTime(provider) }])
        report("InMemoryProvider, \(size) keys", times[0], against: times[0])
        report("SettingsProvider, \(size) keys", times[1], against: times[0])
    }
}

// MARK: Watches

/// Counts down the watchers that have seen their first value.
actor Readiness {
    private var waiting: Int
    private var continuation: CheckedContinuation<Void, Never>?
    init(_ count: Int) { waiting = count }
    func arrived() {
        waiting -= 1
        if waiting == 0 { continuation?.resume() }
    }
    func all() async {
        if waiting == 0 { return }
        await withCheckedContinuation { continuation = $0 }
    }
}

/// The time of one change to the watched key `target`, with `idle` watchers on other keys and one
/// on `target` (each started and past its first value first); the watched value is waited for
/// at the end.
func watchTime(_ provider: some ConfigProvider, idle: Int, writes: Int, write: (Int) -> Void) async -> Duration {
    let ready = Readiness(idle + 1)
    let last = writes - 1
    return await withTaskGroup(of: Void.self) { group in
        for i in 0...idle {
            let key: AbsoluteConfigKey = i == idle ? ["target"] : ["idle\(i)"]
            group.addTask {
                _ = try? await provider.watchValue(forKey: key, type: .int) { updates in
                    var first = true
                    for await update in updates {
                        if first { first = false; await ready.arrived() }
                        if i < idle { continue }
                        if case .success(let result) = update, result.value?.content == .int(last) { return }
                    }
                }
            }
        }
        await ready.all()
        let t = time(writes, write)
        await group.next()  // the target's watcher saw the last value
        group.cancelAll()
        return t
    }
}

if sections.contains("watches") {
    print("one change to a watched key, 100 idle watchers on other keys (median of \(rounds) rounds):")
    let writes = quick ? 200 : 2_000
    var watchTimes: [[Duration]] = [[], [], [], [], []]
    for _ in 0..<rounds {
        let mutable = MutableInMemoryProvider(initialValues: ["target": -1])
        watchTimes[0].append(await watchTime(mutable, idle: 100, writes: writes) { i in
            if i >= 0 { mutable.setValue(.init(.int(i), isSecret: false), forKey: ["target"]) }
        })
        let store = SettingsStore.inMemory(["target": -1])
        watchTimes[1].append(await watchTime(SettingsProvider(store: store), idle: 100, writes: writes) { i in
            if i >= 0 { store["target"] = .integer(PlistInteger(Int64(i))) }
        })
        let alone = SettingsStore.inMemory(["target": -1])  // no idle watchers: what the 100 cost
        watchTimes[3].append(await watchTime(SettingsProvider(store: alone), idle: 0, writes: writes) { i in
            if i >= 0 { alone["target"] = .integer(PlistInteger(Int64(i))) }
        })
        let observed = SettingsStore.inMemory(["target": -1])  // the store's own key observation, no task
        let observation = observed.onChange(of: "target") { _, _ in }
        watchTimes[4].append(time(writes) { i in observed["target"] = .integer(PlistInteger(Int64(i))) })
        observation.cancel()
        let unwatched = SettingsStore.inMemory(["target": -1])  // the floor: the store's write alone
        watchTimes[2].append(time(writes) { i in unwatched["target"] = .integer(PlistInteger(Int64(i))) })
    }
    let watchMedians = watchTimes.map { $0.sorted()[$0.count / 2] }
    report("MutableInMemoryProvider", watchMedians[0], against: watchMedians[0])
    report("SettingsProvider, in-memory store", watchMedians[1], against: watchMedians[0])
    report("SettingsProvider, no idle watchers", watchMedians[3], against: watchMedians[0])
    report("(the same write, one store observer of the key)", watchMedians[4], against: watchMedians[0])
    report("(the same write to a store nobody watches)", watchMedians[2], against: watchMedians[0])
}
