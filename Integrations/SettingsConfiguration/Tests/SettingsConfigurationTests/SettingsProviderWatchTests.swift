import Configuration
import Foundation
import Settings
import SettingsConfiguration
import Testing

/// `watchValue` hears a change another process makes to the file (inotify, no polling).
struct SettingsProviderWatchTests {
    /// Runs the root package's `settings` tool (built beside the tests: `swift build --product settings`).
    static func settingsTool(_ arguments: [String], configHome: URL) throws -> Int32 {
        let tool = builtExecutable("settings")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            throw SettingsError(.missingFile, path: tool.path, detail: "build it first: swift build --product settings")
        }
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CONFIG_HOME": configHome.path]) { $1 }
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(.timeLimit(.minutes(1)))
    func aSecondProcessWritingTheFileReachesWatchValue() async throws {
        let dir = try TempDir()
        let file = dir.url.appending(path: "demo-app/settings.plist")
        #expect(try Self.settingsTool(["write", "demo-app", "log.level", "info"], configHome: dir.url) == 0)
        let store = SettingsStore.file(file)
        let provider = SettingsProvider(store: store)
        let clock = ContinuousClock()
        let (latency, values) = try await provider.watchValue(forKey: ["log", "level"], type: .string) { updates in
            var values: [String?] = []
            var written = clock.now
            for await result in updates {
                values.append(try result.get().value.flatMap { try? $0.content.stringValue() })
                if values.count == 2 { return (clock.now - written, values) }
                written = clock.now
                #expect(try Self.settingsTool(["write", "demo-app", "log.level", "debug"], configHome: dir.url) == 0)
            }
            return (Duration.zero, values)
        }
        #expect(values == ["info", "debug"])
        print("SettingsProviderWatchTests: the other process's write reached watchValue \(latency) after it started")
    }
}
