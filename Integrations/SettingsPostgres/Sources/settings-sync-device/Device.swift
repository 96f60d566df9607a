// settings-sync-device: one "device" for the sync fault script (Tools/sync-fault-tests.py) and the demo.
//
//   settings-sync-device MODE --file PATH --app APP [--url URL] [options]
//     write --count N --keys K --prefix P --tag T [--interval-ms M] [--watch 1] [--linger-ms L]
//                                                                     ACK <i> per flushed write, then DONE
//                                                                     (--watch 1: RECV lines too, as watch;
//                                                                      --linger-ms: sync L ms more after DONE)
//     dump [--timeout S]                                              one JSON line of the user layer (exit 3: no sync)
//     watch                                                           RECV <key> <unix-ns> <value>, STATUS <status>
//     sync [--seconds S]                                              STATUS lines
//     load --count N --prefix P                                       ACK, then UPLOADED <ms>
// --url defaults to $SETTINGS_PG_URL. Lines on stdout are flushed one by one.
import Foundation
import Settings
import SettingsPlist
import SettingsPostgres
import Synchronization

/// Writes whole lines to stdout, flushed, one writer at a time.
enum Out {
    private static let lock = Mutex(())

    static func line(_ text: String) {
        lock.withLock { _ in
            FileHandle.standardOutput.write(Data((text + "\n").utf8))  // unbuffered: one write per line
        }
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

func unixNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func text(of value: PlistValue?) -> String {
    guard let value else { return "nil" }
    if case .string(let s) = value { return s }
    return value.description
}

struct Options {
    var mode = ""
    var values: [String: String] = [:]

    init(_ args: [String]) throws {
        guard let first = args.first else { throw UsageError() }
        mode = first
        var i = 1
        while i < args.count {
            let a = args[i]
            guard a.hasPrefix("--"), i + 1 < args.count else { throw UsageError() }
            values[String(a.dropFirst(2))] = args[i + 1]
            i += 2
        }
    }

    func string(_ name: String) throws -> String {
        guard let v = values[name] else { throw UsageError(missing: name) }
        return v
    }

    func int(_ name: String, default d: Int? = nil) throws -> Int {
        guard let v = values[name] else {
            if let d { return d }
            throw UsageError(missing: name)
        }
        guard let n = Int(v) else { throw UsageError(missing: name) }
        return n
    }
}

struct UsageError: Error {
    var missing: String?
}

@main
struct SyncDevice {
    static func main() async {
        let options: Options
        do {
            options = try Options(Array(CommandLine.arguments.dropFirst()))
        } catch {
            Out.error("usage: settings-sync-device write|dump|watch|sync|load --file PATH --app APP [--url URL] …")
            exit(2)
        }
        do {
            exit(try await run(options))
        } catch let error as UsageError {
            Out.error("settings-sync-device: missing or bad option --\(error.missing ?? "?")")
            exit(2)
        } catch {
            Out.error("settings-sync-device: \(error)")
            exit(1)
        }
    }

    static func run(_ o: Options) async throws -> Int32 {
        let file = URL(filePath: try o.string("file"))
        let app = try o.string("app")
        guard let url = o.values["url"] ?? ProcessInfo.processInfo.environment["SETTINGS_PG_URL"] else {
            throw UsageError(missing: "url")
        }
        let store = SettingsStore.file(file)
        let sync = try SettingsSync.postgres(url: url, store: store, app: app)
        let printStatus = o.mode == "watch" || o.mode == "sync"
        let statuses = sync.statusUpdates
        Task {
            var last = ""
            for await status in statuses {
                let line = "STATUS \(status)"
                guard line != last else { continue }
                last = line
                if printStatus { Out.line(line) } else { Out.error(line) }
            }
        }
        let problems = sync.problems
        Task { for await p in problems { Out.error("PROBLEM \(p)") } }
        let conflicts = sync.conflicts
        Task { for await c in conflicts { Out.error("CONFLICT \(c)") } }

        // watch (and write --watch 1): subscribe before sync starts so no remote change is missed.
        var watchTask: Task<Void, Never>?
        if o.mode == "watch" || o.values["watch"] == "1" {
            let changes = store.changes
            watchTask = Task {
                for await change in changes where change.origin == .sync {
                    let now = unixNanoseconds()
                    for key in change.keys {
                        Out.line("RECV \(key.path) \(now) \(text(of: store.value(for: key)))")
                    }
                }
            }
        }
        _ = watchTask
        _ = store.value(for: "") // load the file now

        let runner = Task { await sync.run() }
        let termination = installTermination(sync: sync, store: store, watchStdin: o.mode == "watch")
        defer { withExtendedLifetime(termination) {} }

        switch o.mode {
        case "write":
            let count = try o.int("count"), keys = try o.int("keys"), interval = try o.int("interval-ms", default: 0)
            let prefix = try o.string("prefix"), tag = try o.string("tag")
            guard keys > 0 else { throw UsageError(missing: "keys") }
            for i in 0..<count {
                store[SettingsKey("\(prefix)/k\(i % keys)")] = .string("\(tag):\(i):\(unixNanoseconds())")
                try await store.flush()
                Out.line("ACK \(i)")
                if interval > 0 { try await Task.sleep(for: .milliseconds(interval)) }
            }
            guard await synchronize(sync, timeout: .seconds(60)) else {
                Out.line("TIMEOUT")
                return 3
            }
            Out.line("DONE")
            // --linger-ms: keep syncing (and watching) a while, for the other devices' last writes.
            let linger = try o.int("linger-ms", default: 0)
            if linger > 0 { try await Task.sleep(for: .milliseconds(linger)) }
        case "dump":
            let timeout = try o.int("timeout", default: 60)
            guard await synchronize(sync, timeout: .seconds(timeout)) else { return 3 }
            var leaves: [String: String] = [:]
            collect(store.contents(of: .user), [], into: &leaves)
            let data = try JSONSerialization.data(withJSONObject: leaves, options: [.sortedKeys, .withoutEscapingSlashes])
            Out.line(String(decoding: data, as: UTF8.self))
        case "watch":
            await runner.value
        case "sync":
            if let seconds = o.values["seconds"].flatMap(Double.init) {
                try? await Task.sleep(for: .seconds(seconds))
            } else {
                await runner.value
            }
        case "load":
            let count = try o.int("count"), prefix = try o.string("prefix")
            let writes = (0..<count).map { (key: SettingsKey("\(prefix)/k\($0)"), value: PlistValue?.some(.string("load:\($0)"))) }
            store.applyToUserLayer(writes, origin: .write)
            try await store.flush()
            Out.line("ACK")
            let start = ContinuousClock.now
            guard await synchronize(sync, timeout: .seconds(120)) else {
                Out.line("TIMEOUT")
                return 3
            }
            let elapsed = ContinuousClock.now - start
            Out.line("UPLOADED \(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)")
        default:
            throw UsageError(missing: "mode")
        }
        sync.stop()
        await runner.value
        try? await store.flush()
        return 0
    }

    /// `synchronize()`, retried through outages until `timeout`.
    static func synchronize(_ sync: SettingsSync, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            do {
                try await sync.synchronize()
                return true
            } catch {
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        return false
    }

    static func collect(_ dict: PlistDictionary, _ prefix: [String], into out: inout [String: String]) {
        for (k, v) in dict {
            if case .dictionary(let d) = v {
                collect(d, prefix + [k], into: &out)
            } else {
                out[SettingsKey(components: prefix + [k]).path] = text(of: v)
            }
        }
    }

    /// SIGTERM (and, for `watch`, end of stdin): stop syncing, save, exit 0.
    static func installTermination(sync: SettingsSync, store: SettingsStore, watchStdin: Bool) -> any DispatchSourceSignal {
        signal(SIGTERM, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        let finish: @Sendable () -> Void = {
            sync.stop()
            try? store.flushNow()
            exit(0)
        }
        source.setEventHandler(handler: finish)
        source.resume()
        if watchStdin {
            Thread.detachNewThread {
                while readLine() != nil {}
                finish()
            }
        }
        return source
    }
}

