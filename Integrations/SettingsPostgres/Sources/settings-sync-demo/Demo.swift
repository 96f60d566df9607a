// settings-sync-demo: two "devices" (two processes of this program, each with its own
// XDG_CONFIG_HOME) syncing one settings file's user layer through PostgreSQL.
//
//   bash Scripts/test-server.sh swift run settings-sync-demo     (from Integrations/SettingsPostgres, as root)
//   SETTINGS_PG_URL=postgres://me:password@127.0.0.1/settings swift run settings-sync-demo
// A device that cannot reach the server says why (ERROR …) within about 5 s, and the demo stops.
import Foundation
import Settings
import SettingsPlist
import SettingsPostgres

@main
struct SyncDemo {
    static func main() async {
        let args = Array(CommandLine.arguments.dropFirst())
        guard let url = ProcessInfo.processInfo.environment["SETTINGS_PG_URL"] else {
            print("""
                settings-sync-demo needs a PostgreSQL server: set SETTINGS_PG_URL, e.g.
                  SETTINGS_PG_URL=postgres://settings:settings@127.0.0.1:5432/settings swift run settings-sync-demo
                or start a throwaway one:
                  bash Scripts/test-server.sh swift run settings-sync-demo   (from Integrations/SettingsPostgres, as root)
                """)
            exit(2)
        }
        do {
            if args.first == "device" {
                try await Device.run(Array(args.dropFirst()), url: url)
            } else {
                try await orchestrate(url: url)
            }
            exit(0)
        } catch {
            if args.first == "device" { say("ERROR \(error)") } else { print("settings-sync-demo: \(error)") }
            exit(1)
        }
    }

    // MARK: The two devices

    static func orchestrate(url: String) async throws {
        let app = "demo.\(UUID().uuidString.prefix(8))"
        let root = FileManager.default.temporaryDirectory.appending(path: "settings-sync-demo-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let a = DeviceProcess(name: "A", home: root.appending(path: "A"), app: app)
        let b = DeviceProcess(name: "B", home: root.appending(path: "B"), app: app)
        print("Two devices, one server: A's config in \(a.home.path), B's in \(b.home.path), space \(app)\n")

        print("1. A writes theme = dark; B is watching.")
        let watchB = try b.start(["watch", "1"])
        _ = try await watchB.waitFor("READY")
        try await a.run(["write", "theme", "dark"])
        print("   B: \(try await watchB.waitFor("RECV"))")
        try await watchB.finish()

        print("2. B writes fontSize = 14; A is watching.")
        let watchA = try a.start(["watch", "1"])
        _ = try await watchA.waitFor("READY")
        try await b.run(["write", "fontSize", "14"])
        print("   A: \(try await watchA.waitFor("RECV"))")
        try await watchA.finish()

        print("3. Both write accent while offline (A first, then B); then each syncs.")
        try await a.run(["write", "accent", "red", "--offline"])
        try await Task.sleep(for: .milliseconds(5))   // B's edit is the later one
        try await b.run(["write", "accent", "blue", "--offline"])
        for line in try await a.run(["sync"]) where line.hasPrefix("CONFLICT") { print("   A: \(line)") }
        for line in try await b.run(["sync"]) where line.hasPrefix("CONFLICT") { print("   B: \(line)") }
        for line in try await a.run(["sync"]) where line.hasPrefix("CONFLICT") { print("   A: \(line)") }

        print("4. Result:")
        let dumpA = try await a.run(["dump"]), dumpB = try await b.run(["dump"])
        for line in dumpA { print("   A  \(line)") }
        for line in dumpB { print("   B  \(line)") }
        print(dumpA == dumpB ? "\nBoth devices hold the same settings: the later accent (blue) won; the older was reported." :
                               "\nThe devices differ: that is a bug.")
        if dumpA != dumpB { exit(1) }
    }
}

/// A device of the demo: this program run with `device …` and its own XDG_CONFIG_HOME.
struct DeviceProcess {
    let name: String
    let home: URL
    let app: String

    func start(_ args: [String]) throws -> RunningDevice {
        let p = Process()
        p.executableURL = Bundle.main.executableURL ?? URL(filePath: "/proc/self/exe").resolvingSymlinksInPath()
        p.arguments = ["device", app] + args
        var env = ProcessInfo.processInfo.environment
        env["XDG_CONFIG_HOME"] = home.path
        p.environment = env
        let pipe = Pipe()
        p.standardOutput = pipe
        let lines = LineReader(pipe.fileHandleForReading)
        try p.run()
        return RunningDevice(process: p, lines: lines)
    }

    /// Runs a command to the end; its output lines.
    @discardableResult
    func run(_ args: [String]) async throws -> [String] {
        let d = try start(args)
        var out: [String] = []
        for await line in d.lines.stream { out.append(line) }
        d.process.waitUntilExit()
        if let error = out.first(where: { $0.hasPrefix("ERROR ") }) { throw DemoError(message: "device \(name): \(error.dropFirst(6))") }
        guard d.process.terminationStatus == 0 else { throw DemoError(message: "device \(name) \(args) failed: \(out)") }
        return out
    }
}

struct DemoError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

struct RunningDevice {
    let process: Process
    let lines: LineReader

    func waitFor(_ prefix: String) async throws -> String {
        for await line in lines.stream {
            if line.hasPrefix(prefix) { return line }
            if line.hasPrefix("ERROR ") { throw DemoError(message: String(line.dropFirst(6))) }
        }
        throw DemoError(message: "device ended before \(prefix)")
    }

    func finish() async throws {
        for await _ in lines.stream {}
        process.waitUntilExit()
    }
}

/// A pipe's lines, read on a thread of its own.
final class LineReader: Sendable {
    let stream: AsyncStream<String>

    init(_ handle: FileHandle) {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        self.stream = stream
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let nl = buffer.firstIndex(of: 10) {
                    continuation.yield(String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...nl)
                }
            }
            if !buffer.isEmpty { continuation.yield(String(decoding: buffer, as: UTF8.self)) }
            continuation.finish()
        }
    }
}

// MARK: Device side

enum Device {
    static func run(_ args: [String], url: String) async throws {
        guard args.count >= 2 else { throw DemoError(message: "device APP COMMAND …") }
        let app = args[0], command = args[1], rest = Array(args.dropFirst(2))
        let store = SettingsStore.file(SettingsStore.defaultFileURL(application: "SyncDemo"))
        let sync = try SettingsSync.postgres(url: url, store: store, app: app)
        let conflicts = sync.conflicts
        Task { for await c in conflicts { say("CONFLICT \(c)") } }

        if command == "write", rest.count >= 2, rest.contains("--offline") {
            store[SettingsKey(rest[0])] = .string(rest[1])
            try await store.flush()
            say("wrote \(rest[0]) = \(rest[1]) without syncing")
            return
        }
        var watching: Task<Void, Never>?
        if command == "watch" {
            let count = Int(rest.first ?? "1") ?? 1
            let changes = store.changes
            watching = Task {
                var seen = 0
                for await change in changes where change.origin == .sync {
                    for key in change.keys {
                        say("RECV \(key.path) = \(store[key].map { $0.description } ?? "nil") (origin .\(change.origin.rawValue))")
                        seen += 1
                    }
                    if seen >= count { return }
                }
            }
            _ = store["theme"]
        }
        let runner = Task { await sync.run() }
        defer { sync.stop() }
        switch command {
        case "write":
            store[SettingsKey(rest[0])] = .string(rest[1])
            try await synchronize(sync)
            say("wrote \(rest[0]) = \(rest[1]) and synced")
        case "sync":
            try await synchronize(sync)
            say("synced")
        case "dump":
            try await synchronize(sync)
            var lines: [String] = []
            collect(store.contents(of: .user), [], &lines)
            for line in lines.sorted() { say(line) }
        case "watch":
            try await synchronize(sync)
            say("READY")
            let watcher = watching
            let timeout = Task { try? await Task.sleep(for: .seconds(30)); watcher?.cancel() }
            await watcher?.value
            timeout.cancel()
        default:
            throw DemoError(message: "unknown device command \(command)")
        }
        sync.stop()
        await runner.value
    }

    /// Up to date within 30 s (another process may sync the file); unreachable for 5 s is an error.
    static func synchronize(_ sync: SettingsSync) async throws {
        let start = ContinuousClock.now
        while true {
            do {
                return try await sync.synchronize()
            } catch {
                let offline = if case .offline = error { true } else { false }
                if ContinuousClock.now - start > (offline ? .seconds(5) : .seconds(30)) { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    static func collect(_ dict: PlistDictionary, _ prefix: [String], _ out: inout [String]) {
        for (k, v) in dict {
            if case .dictionary(let d) = v { collect(d, prefix + [k], &out) } else {
                out.append("\(SettingsKey(components: prefix + [k]).path) = \(v)")
            }
        }
    }
}

/// One unbuffered line on stdout (the parent reads it as it comes).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
