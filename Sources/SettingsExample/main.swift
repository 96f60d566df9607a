// SettingsExample: the first program to run. It uses the library end to end and prints what
// happened and where the files are, so you can open them.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Settings

enum Theme: String, Codable, Sendable {
    case system, light, dark
}

struct Profile: Codable, Equatable, Sendable {
    var name: String
    var volume: Double
    var favourites: [String]
}

/// The program's settings: typed properties, each bound to a key of the store.
struct AppSettings {
    @Setting("autoPlay", default: false) var autoPlay: Bool
    @Setting("Network/timeout", default: 30.0) var timeout: Double
    @Setting("Network/proxy") var proxy: String?                      // no default anywhere: warned about
    @Setting("accent", default: SettingsColor(red: 1, green: 0.5, blue: 0)) var accent: SettingsColor
    @Setting("theme", default: Theme.system) var theme: Theme
    @Setting("profile", default: Profile(name: "Guest", volume: 0.5, favourites: [])) var profile: Profile
    @Setting(default: 0) var launchCount: Int                        // key derived: "LaunchCount"
}

func run() async throws {
    let here = URL(filePath: #filePath).deletingLastPathComponent()
    let directory = FileManager.default.temporaryDirectory.appending(path: "SettingsExample")
    try? FileManager.default.removeItem(at: directory)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appending(path: "settings.plist")

    // Diagnostics (missing defaults, wrong types, rules) go to standard error unless replaced.
    SettingsDiagnostics.handler = { diagnostic in print("   diagnostic: \(diagnostic.message)") }

    print("1. A store kept in \(file.path), with defaults from Defaults.plist:")
    let store = SettingsStore.file(file)
    let settings = SettingsStore.bind(AppSettings(), to: store)
    let warnings = try store.registerDefaults(contentsOf: here.appending(path: "Defaults.plist"), checking: settings)
    print("   registered; \(warnings.count) setting(s) without a default anywhere (reported above)")

    print("\n2. Reading settings (value, and the layer it comes from):")
    print("   autoPlay = \(settings.autoPlay)   from \(settings.$autoPlay.source?.name ?? "code")")
    print("   timeout  = \(settings.timeout)   from \(settings.$timeout.source?.name ?? "code")")
    print("   accent   = \(settings.accent.hex)   theme = \(settings.theme.rawValue)   proxy = \(settings.proxy ?? "nil")")

    print("\n3. Writing settings: in memory at once, on disk after flush():")
    settings.autoPlay = true
    settings.theme = .dark
    settings.launchCount += 1
    settings.profile = Profile(name: "Ada", volume: 0.8, favourites: ["jazz", "piano"])
    try await store.flush()
    print("   autoPlay = \(settings.autoPlay) (from \(settings.$autoPlay.source?.name ?? "code")), launchCount key = \(settings.$launchCount.key?.path ?? "?")")
    print("   \(file.path) now holds:")
    let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
    print(text.split(separator: "\n").map { "   | " + $0 }.joined(separator: "\n"))

    print("\n4. An override file (target-specific options) wins over the user's file:")
    settings.timeout = 60
    try store.loadOverrides(contentsOf: here.appending(path: "Overrides.plist"))
    print("   timeout = \(settings.timeout) from \(settings.$timeout.source?.name ?? "code") (the user's 60 stays in the file)")

    print("\n5. A malformed plist gives an error with its file, line and column:")
    let broken = directory.appending(path: "broken.plist")
    try Data("<plist><dict>\n  <key>a</key>\n  <integr>1</integr>\n</dict></plist>".utf8).write(to: broken)
    do {
        _ = try PlistValue(contentsOf: broken)
    } catch {
        print("   \(error)")
    }
    print("\nInspect the file with: swift run settings print --typed-json \(file.path)")
}

do {
    try await run()
} catch {
    print("SettingsExample failed: \(error)")
}
