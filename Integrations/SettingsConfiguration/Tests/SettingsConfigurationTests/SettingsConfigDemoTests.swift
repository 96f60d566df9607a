import Foundation
import Testing

/// The example service, run as a process: its port from the command line, its log level from the
/// settings file, changed at once by the `settings` tool from outside, and kept for the next run.
struct SettingsConfigDemoTests {
    /// A running demo, its output lines read on a thread of their own (a blocking read never
    /// runs on Swift's cooperative pool).
    final class Demo: Sendable {
        let process: Process
        let lines: AsyncStream<String>

        init(arguments: [String], configHome: URL) throws {
            let process = Process()
            process.executableURL = builtExecutable("settings-config-demo")
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CONFIG_HOME": configHome.path]) { $1 }
            let pipe = Pipe()
            process.standardOutput = pipe
            let (lines, continuation) = AsyncStream.makeStream(of: String.self)
            try process.run()
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
            self.process = process
            self.lines = lines
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

        /// Sends SIGTERM and waits for the exit status (on a thread of its own).
        func terminate() async -> Int32 {
            process.terminate()
            let process = self.process
            return await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    process.waitUntilExit()
                    continuation.resume(returning: process.terminationStatus)
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func theSettingsToolChangesTheRunningServicesLevelAndTheValueSurvivesARestart() async throws {
        let dir = try TempDir()
        let first = try Demo(arguments: ["--http-port", "9001"], configHome: dir.url)
        #expect(await first.lines(until: "log level:").suffix(2) == [
            "listening on port 9001 (settings file: \(dir.url.path)/settings-config-demo/settings.plist)",
            "log level: info",
        ])
        #expect(try SettingsProviderWatchTests.settingsTool(["write", "settings-config-demo", "log.level", "debug"], configHome: dir.url) == 0)
        #expect(await first.lines(until: "log level:").last == "log level: debug")
        #expect(await first.terminate() == 0, "SIGTERM is a graceful shutdown")
        #expect(await first.lines(until: "stopped").suffix(2) == ["stopping", "stopped"])

        let second = try Demo(arguments: [], configHome: dir.url)
        #expect(await second.lines(until: "log level:") == [
            "listening on port 8080 (settings file: \(dir.url.path)/settings-config-demo/settings.plist)",
            "log level: debug",
        ])
        #expect(await second.terminate() == 0)
    }
}
