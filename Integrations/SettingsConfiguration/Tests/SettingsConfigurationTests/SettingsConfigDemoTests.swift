#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing

/// The example service, run as a process: its port from the command line, its log level from the
/// settings file, changed at once by the `settings` tool from outside, and kept for the next run.
struct SettingsConfigDemoTests {
    /// A running demo, its output lines read on a thread of their own (a blocking read never
    /// runs on Swift's cooperative pool). It owns its process: whatever path a test leaves by (an
    /// expectation that failed, a thrown error, the time limit), dropping the `Demo` kills the
    /// process and waits for it, so no demo outlives its test or holds the runner's output open.
    final class Demo: Sendable {
        let process: Process
        let lines: AsyncStream<String>
        private let errors: Collected

        /// What the demo wrote to standard error so far (its log lines), for failure messages.
        var errorOutput: String { errors.text.withLock { $0 } }

        /// Text collected by a reader thread.
        final class Collected: Sendable {
            let text = Mutex("")
        }

        init(arguments: [String], configHome: URL) throws {
            let pipe = Pipe(), errorPipe = Pipe()   // standard error not the runner's: an orphan would keep it open
            let (lines, continuation) = AsyncStream.makeStream(of: String.self)
            let errors = Collected()
            let process = try startProcess(builtExecutable("settings-config-demo"), arguments,
                                           environment: ["XDG_CONFIG_HOME": configHome.path], output: pipe, errors: errorPipe)
            let reader = pipe.fileHandleForReading
            Thread.detachNewThread {
                var pending = Data()
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                        pending = Data(pending[(newline + 1)...])
                    }
                }
                continuation.finish()
            }
            let errorReader = errorPipe.fileHandleForReading
            Thread.detachNewThread {
                while true {
                    let chunk = errorReader.availableData
                    if chunk.isEmpty { break }
                    errors.text.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
                }
            }
            self.process = process
            self.lines = lines
            self.errors = errors
        }

        deinit { kill() }

        /// Ends the process at once (SIGKILL) if it still runs, and waits for it.
        func kill() {
            if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        /// The lines up to and including the first that contains `text`.
        func lines(until text: String) async -> [String] {
            var seen: [String] = []
            for await line in lines {
                seen.append(line)
                if line.contains(text) { break }
            }
            return seen
        }

        /// Sends SIGTERM and waits for the exit status (on a thread of its own); a demo that has
        /// not stopped within `limit` is killed (its status is then SIGKILL's 9, not 0).
        func terminate(within limit: Duration = .seconds(30)) async -> Int32 {
            process.terminate()
            let process = self.process
            return await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    let deadline = ContinuousClock.now + limit
                    while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
                    if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
                    process.waitUntilExit()
                    continuation.resume(returning: process.terminationStatus)
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func theSettingsToolChangesTheRunningServicesLevelAndTheValueSurvivesARestart() async throws {
        // Checked before any process starts: without the tool the test fails here, at once.
        let tool = builtExecutable("settings")
        try #require(FileManager.default.isExecutableFile(atPath: tool.path),
                     "no settings tool at \(tool.path): build it first (swift build --product settings, as ci.sh does)")
        let dir = try TempDir()
        let port = try freePort()
        let first = try Demo(arguments: ["--http-port", "\(port)"], configHome: dir.url)
        defer { first.kill() }
        #expect(await first.lines(until: "log level:").suffix(2) == [
            "listening on port \(port) (settings file: \(dir.url.path)/settings-config-demo/settings.plist)",
            "log level: info",
        ], "\(first.errorOutput)")
        #expect(try await SettingsProviderWatchTests.settingsTool(["write", "settings-config-demo", "log/level", "debug"], configHome: dir.url) == 0)
        #expect(await first.lines(until: "log level:").last == "log level: debug")
        #expect(await first.terminate() == 0, "SIGTERM is a graceful shutdown")
        #expect(await first.lines(until: "stopped").suffix(2) == ["stopping", "stopped"])

        let second = try Demo(arguments: [], configHome: dir.url)
        defer { second.kill() }
        #expect(await second.lines(until: "log level:") == [
            "listening on port 8080 (settings file: \(dir.url.path)/settings-config-demo/settings.plist)",
            "log level: debug",
        ], "\(second.errorOutput)")
        #expect(await second.terminate() == 0)
    }

    /// A test that fails half-way drops its demo without stopping it: the demo must end then.
    @Test(.timeLimit(.minutes(1)))
    func aDemoThatATestDropsIsEnded() async throws {
        let dir = try TempDir()
        var demo: Demo? = try Demo(arguments: ["--http-port", "\(try freePort())"], configHome: dir.url)
        let pid = try #require(demo?.process.processIdentifier)
        #expect(await demo?.lines(until: "log level:").last == "log level: info")
        demo = nil   // what leaving a test early does
        #expect(Glibc.kill(pid, 0) == -1 && errno == ESRCH, "the demo \(pid) still runs")
    }

    @Test func aFreePortIsOneNobodyListensOn() throws {
        let port = try freePort()
        #expect((1024...65535).contains(port))
        #expect(port != 8080 && port != 9001)
    }
}
