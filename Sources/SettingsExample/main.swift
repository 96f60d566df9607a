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

/// A model kept whole under one key (@StoredModel) and in a file of its own.
struct Profile: SettingsModel, Codable, Equatable {
    var name = "Guest"
    var volume = 0.5
    var favourites: [String] = []
    @Transient var isEditing = false          // never archived
}

/// The program's settings: typed properties, each bound to a key of the store.
struct AppSettings {
    @Setting("autoPlay", default: false) var autoPlay: Bool
    @Setting("Network/timeout", default: 30.0) var timeout: Double
    @Setting("Network/proxy") var proxy: String?                      // no default anywhere: warned about
    @Setting("accent", default: SettingsColor(red: 1, green: 0.5, blue: 0)) var accent: SettingsColor
    @Setting("theme", default: Theme.system) var theme: Theme
    @Setting(default: 0) var launchCount: Int                        // key derived: "LaunchCount"
    @StoredModel("profile") var profile: Profile                     // a whole model under one key
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

    print("\n3. Observing: a callback with the new and old value, for changes from any source:")
    let observation = settings.$theme.onChange { new, old in print("   theme changed: \(old.rawValue) -> \(new.rawValue)") }

    print("\n4. Writing settings and a model: in memory at once, durable after flush():")
    settings.autoPlay = true
    settings.theme = .dark
    settings.launchCount += 1
    settings.profile.name = "Ada"
    settings.profile.favourites = ["jazz", "piano"]
    try await store.flush()
    print("   autoPlay = \(settings.autoPlay) (from \(settings.$autoPlay.source?.name ?? "code")), launchCount key = \(settings.$launchCount.key?.path ?? "?")")
    print("   \(store.persistenceStatus.fileWrites) file write(s) so far (writes are coalesced); \(file.path) now holds:")
    let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
    print(text.split(separator: "\n").map { "   | " + $0 }.joined(separator: "\n"))

    print("\n5. Another process edits the file (here: a second store on it); this one reloads it:")
    let changes = store.changes                      // observing starts here
    let other = SettingsStore.file(file, externalChanges: .ignored)
    other["theme"] = "light"
    try await other.flush()
    let change = await withTaskGroup(of: SettingsChange?.self) { group in
        group.addTask { for await change in changes { return change }; return nil }
        group.addTask { try? await Task.sleep(for: .seconds(5)); return nil }   // never wait forever
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
    print("   change event: \(change.map(String.init(describing:)) ?? "none within 5 s")   theme is now \(settings.theme.rawValue)")
    observation.cancel()

    print("\n6. An override file (target-specific options) wins over the user's file:")
    settings.timeout = 60
    try store.loadOverrides(contentsOf: here.appending(path: "Overrides.plist"))
    print("   timeout = \(settings.timeout) from \(settings.$timeout.source?.name ?? "code") (the user's 60 stays in the file)")

    print("\n7. A model file of its own, saved atomically and loaded back:")
    let profileFile = directory.appending(path: "profile.plist")
    var profile = settings.profile
    profile.isEditing = true
    try profile.save(to: profileFile)
    let loaded = try Profile.load(from: profileFile)
    print("   saved \(profileFile.path); loaded back: name = \(loaded.name), favourites = \(loaded.favourites), isEditing = \(loaded.isEditing) (transient)")

    print("\n8. A malformed plist gives an error with its file, line and column:")
    let broken = directory.appending(path: "broken.plist")
    try Data("<plist><dict>\n  <key>a</key>\n  <integr>1</integr>\n</dict></plist>".utf8).write(to: broken)
    do {
        _ = try PlistValue(contentsOf: broken)
    } catch {
        print("   \(error)")
    }
    try await store.flush()
    print("\nInspect the files with: swift run settings read \(file.path)")
    print("                        swift run settings print --json \(profileFile.path)")
}

do {
    try await run()
} catch {
    print("SettingsExample failed: \(error)")
}
