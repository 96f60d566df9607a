import Foundation
import Settings
import Synchronization

/// Settings reads and writes through `@Setting`, beside `UserDefaults` and a `Mutex`-guarded
/// dictionary (the limit: the least any thread-safe in-memory store can do).
enum StoreBenchmarks {
    struct BenchSettings {
        @Setting var count: Int
        @Setting var name: String
        /// A key no one reads: the Observation framework has never been told of it (issue 29's
        /// target: a write of an unobserved key within 3x the `Mutex` dictionary's).
        @Setting var unread: Int
        init(store: SettingsStore) {
            _count = Setting("count", default: 0, store: store)
            _name = Setting("name", default: "", store: store)
            _unread = Setting("unread", default: 0, store: store)
        }
    }

    /// Runs each store operation `count` times with no timing, for instruction-count profiles
    /// (`valgrind --tool=callgrind settings-bench --profile-store 100000`).
    static func profile(count: Int) {
        let store = SettingsStore.inMemory(["count": 42, "name": "Ada Lovelace"])
        let settings = BenchSettings(store: store)
        let ints = Mutex<[String: Int]>(["count": 42])
        blackHole(settings.count)  // a read first, as programs do: the key is then tracked for observation
        profileSettingsWrite(settings, count)
        profileSettingsUnobservedWrite(settings, count)
        profileMutexWrite(ints, count)
        profileSettingsRead(settings, count)
        profileMutexRead(ints, count)

        // The same unobserved write to a file store (loaded, no autosave: each write also records
        // the key as unsaved; a save, and so its scheduling, never runs during the loop).
        let dir = FileManager.default.temporaryDirectory.appending(path: "settings-bench-profile-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fileStore = SettingsStore.file(dir.appending(path: "settings.plist"), autosaveDelay: nil, externalChanges: .ignored)
        let fileSettings = BenchSettings(store: fileStore)
        blackHole(fileSettings.count)
        profileFileStoreUnobservedWrite(fileSettings, count)
    }

    @inline(never) static func profileFileStoreUnobservedWrite(_ settings: BenchSettings, _ count: Int) {
        for i in 0..<count { settings.unread = count &- i }  // another body than the in-memory loop's: not merged with it
    }

    @inline(never) static func profileSettingsWrite(_ settings: BenchSettings, _ count: Int) {
        for i in 0..<count { settings.count = i }
    }

    @inline(never) static func profileSettingsUnobservedWrite(_ settings: BenchSettings, _ count: Int) {
        for i in 0..<count { settings.unread = i &+ 1 }  // not `= i`: the two loops would be merged into one symbol
    }

    @inline(never) static func profileMutexWrite(_ ints: borrowing Mutex<[String: Int]>, _ count: Int) {
        for i in 0..<count { ints.withLock { $0["count"] = i } }
    }

    @inline(never) static func profileSettingsRead(_ settings: BenchSettings, _ count: Int) {
        for _ in 0..<count { blackHole(settings.count) }
    }

    @inline(never) static func profileMutexRead(_ ints: borrowing Mutex<[String: Int]>, _ count: Int) {
        for _ in 0..<count { blackHole(ints.withLock { $0["count"] }) }
    }

    static func run(_ h: Harness) {
        let store = SettingsStore.inMemory(["count": 42, "name": "Ada Lovelace"])
        let settings = BenchSettings(store: store)
        let ints = Mutex<[String: Int]>(["count": 42])
        let strings = Mutex<[String: String]>(["name": "Ada Lovelace"])
        let suite = "settings-bench-\(getpid())"
        guard let defaults = UserDefaults(suiteName: suite) else { return }
        defaults.set(42, forKey: "count")
        defaults.set("Ada Lovelace", forKey: "name")
        defer { defaults.removePersistentDomain(forName: suite) }

        let batch = 1000  // operations per timed call, so the clock's own cost is negligible
        func perOp(_ workload: String, _ system: String, _ body: () -> Void) {
            let s = h.medianSeconds(body) / Double(batch)
            h.record(Harness.Result(workload: workload, system: system, value: s * 1e9, unit: "ns/op", seconds: s))
        }

        perOp("read-int", "Settings") { for _ in 0..<batch { blackHole(settings.count) } }
        perOp("read-int", "Mutex<[String: Int]>") { for _ in 0..<batch { blackHole(ints.withLock { $0["count"] }) } }
        perOp("read-int", "UserDefaults") { for _ in 0..<batch { blackHole(defaults.integer(forKey: "count")) } }

        // A lock costs nothing on the read path of an unlocked setting: the same read from a file
        // store with no administrator's files, and from one whose locked.plist locks another key.
        for locked in [false, true] {
            let dir = FileManager.default.temporaryDirectory.appending(path: "settings-bench-locks-\(getpid())-\(locked)")
            try? FileManager.default.createDirectory(at: dir.appending(path: "xdg/BenchApp"), withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            if locked {
                let plist = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>other</key><integer>1</integer></dict></plist>"
                try? Data(plist.utf8).write(to: dir.appending(path: "xdg/BenchApp/locked.plist"))
            }
            var options = PersistenceOptions()
            options.systemFiles = .application("BenchApp", directories: .fixed([dir.appending(path: "xdg").path]))
            let fileStore = SettingsStore.file(dir.appending(path: "settings.plist"), autosaveDelay: nil, externalChanges: .ignored, options: options)
            let fileSettings = BenchSettings(store: fileStore)
            guard fileStore.isWritable("other") != locked else { fatalError("the lock was not read") }
            perOp("read-int", locked ? "Settings, file store, another key locked" : "Settings, file store, no locks") {
                for _ in 0..<batch { blackHole(fileSettings.count) }
            }
        }

        perOp("read-string", "Settings") { for _ in 0..<batch { blackHole(settings.name) } }
        perOp("read-string", "Mutex<[String: String]>") { for _ in 0..<batch { blackHole(strings.withLock { $0["name"] }) } }
        perOp("read-string", "UserDefaults") { for _ in 0..<batch { blackHole(defaults.string(forKey: "name")) } }

        var i = 0
        perOp("write-int", "Settings") { for _ in 0..<batch { i &+= 1; settings.count = i } }
        perOp("write-int", "Settings, a key never read (unobserved)") { for _ in 0..<batch { i &+= 1; settings.unread = i } }
        perOp("write-int", "Mutex<[String: Int]>") { for _ in 0..<batch { i &+= 1; ints.withLock { $0["count"] = i } } }
        perOp("write-int", "UserDefaults") { for _ in 0..<batch { i &+= 1; defaults.set(i, forKey: "count") } }
    }
}
