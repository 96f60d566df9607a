import Configuration
import Foundation
import Settings
import SettingsConfiguration
import Testing

/// `watchValue` hears a change another process makes to the file (inotify, no polling).
struct SettingsProviderWatchTests {
    /// Runs the root package's `settings` tool (built beside the tests: `swift build --product settings`).
    static func settingsTool(_ arguments: [String], configHome: URL) async throws -> Int32 {
        let tool = builtExecutable("settings")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            throw SettingsError(.missingFile, path: tool.path, detail: "build it first: swift build --product settings")
        }
        return try await runProcess(tool, arguments, environment: ["XDG_CONFIG_HOME": configHome.path])
    }

    @Test(.timeLimit(.minutes(1)))
    func aSecondProcessWritingTheFileReachesWatchValue() async throws {
        let dir = try TempDir()
        let file = dir.url.appending(path: "demo-app/settings.plist")
        #expect(try await Self.settingsTool(["write", "demo-app", "log/level", "info"], configHome: dir.url) == 0)
        let store = SettingsStore.file(file)
        let provider = SettingsProvider(store: store)
        let clock = ContinuousClock()
        let levels = ["debug", "trace"]
        let (latencies, values) = try await provider.watchValue(forKey: ["log", "level"], type: .string) { updates in
            var values: [String?] = []
            var latencies: [Duration] = []
            var written = clock.now
            for await result in updates {
                if !values.isEmpty { latencies.append(clock.now - written) }
                values.append(try result.get().value.flatMap { try? $0.content.stringValue() })
                if values.count > levels.count { break }
                written = clock.now
                #expect(try await Self.settingsTool(["write", "demo-app", "log/level", levels[values.count - 1]], configHome: dir.url) == 0)
            }
            return (latencies, values)
        }
        #expect(values == ["info", "debug", "trace"])
        // The first write can land before the store's file watch starts (150 ms after the file is
        // first read) and is found when it does; the second is heard through inotify.
        print("SettingsProviderWatchTests: another process's writes reached watchValue after \(latencies) (from the start of the process)")
    }
}
