import Foundation
import Settings

/// `flush()` of one change to a 100-key file, beside `UserDefaults.synchronize()` after one change
/// to a 100-key suite, and beside the limit: a plain POSIX write + fsync + rename (+ directory
/// fsync) of the same bytes.
enum PersistenceBenchmarks {
    static func run(_ h: Harness) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "settings-bench-persist-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var initial = PlistDictionary()
        for i in 0..<100 { initial["key\(i)"] = i % 3 == 0 ? .string("value \(i)") : .integer(PlistInteger(Int64(i))) }
        let url = directory.appending(path: "settings.plist")
        try PlistValue.dictionary(initial).write(to: url)
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        var i: Int64 = 0
        let flush = try h.medianSeconds {
            i += 1
            store["key1"] = .integer(PlistInteger(i))
            try store.flushNow()
        }
        record(h, "flush-1-of-100-keys", "Settings", flush)

        let limitPath = directory.appending(path: "limit.plist").path
        let bytes = try PlistValue.dictionary(initial).encoded(as: .xml)
        let limit = h.medianSeconds { posixReplace(limitPath, bytes) }
        record(h, "flush-1-of-100-keys", "POSIX write+fsync+rename (the limit)", limit)

        setenv("XDG_CONFIG_HOME", directory.path, 1)
        let suite = "settings-bench-persist"
        if let defaults = UserDefaults(suiteName: suite) {
            for (key, value) in initial { defaults.set(value.stringValue ?? value.intValue.map(String.init) ?? "", forKey: key) }
            defaults.synchronize()
            let synchronize = h.medianSeconds {
                i += 1
                defaults.set(i, forKey: "key1")
                defaults.synchronize()
            }
            record(h, "flush-1-of-100-keys", "UserDefaults.synchronize()", synchronize)
        }
    }

    static func record(_ h: Harness, _ workload: String, _ system: String, _ seconds: Double) {
        h.record(Harness.Result(workload: workload, system: system, value: seconds * 1e6, unit: "us/op", seconds: seconds))
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
