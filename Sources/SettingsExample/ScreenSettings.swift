// `SettingsExample --watch FILE SECONDS`: a running program for `settings edit` to edit. It keeps
// FILE with a few settings of every kind, registers its Settings.bundle panes, writes its schema
// beside the file, and prints every change it observes until SECONDS have passed.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Settings

/// The settings `--watch` keeps: one of each kind a settings screen shows.
struct ScreenSettings {
    @Setting("autoPlay", default: false, help: "Start playing when the program starts") var autoPlay: Bool
    @Setting("theme", default: "system") var theme: String
    @Setting("volume", default: 5, rules: .clamp(0...10), title: "Volume") var volume: Int
    @Setting("Network/timeout", default: 30.0, rules: .clamp(1...120), title: "Timeout", help: "Seconds to wait for the server") var timeout: Double
    @Setting("apiToken", default: "") var apiToken: String                     // secret by its name
    @Setting("Network/proxy", default: "", title: "Proxy") var proxy: String
    @Setting("launchCount", default: 0) var launchCount: Int
}

/// Keeps `file` for `seconds`, printing each change it observes (`change: KEY = VALUE`, a
/// secret's value redacted), one line at a time.
func watch(file: String, seconds: Int) async throws {
    let here = URL(filePath: #filePath).deletingLastPathComponent()
    let store = SettingsStore.file(URL(filePath: file))
    let settings = SettingsStore.bind(ScreenSettings(), to: store)
    let panes = here.appending(path: "Settings.bundle/Root.plist")
    try store.registerDefaults(contentsOf: panes, checking: settings)
    settings.launchCount += 1
    try await store.flush()
    let schema = try SettingsSchema(of: settings).write(for: store)
    let changes = store.changes
    say("schema: \(schema)")
    say("panes: \(panes.path)")
    say("watching \(file)")
    let deadline = ContinuousClock.now + .seconds(seconds)
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await change in changes {
                for key in change.keys {
                    let value = key.isSecret ? "<redacted>" : store[key].map { "\($0)" } ?? "nil"
                    say("change: \(key.path) = \(value)")
                }
            }
        }
        group.addTask { try? await Task.sleep(until: deadline) }
        await group.next()
        group.cancelAll()
    }
}

/// One line on standard output at once (not held in a buffer: a test reads it while this runs).
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        guard count > 0 else { return }
        written += count
    }
}
