// SettingsExample: the first program to run. It keeps its settings where a real program would
// ($XDG_CONFIG_HOME/SettingsExample/settings.plist), so a second run shows what the first one
// saved. `--reset` removes its files (and their history) and starts over.
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
import SettingsFiles

enum Theme: String, Codable, Sendable, SettingsValue {   // stored as its raw value
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
    @Setting var lastLaunch: Date?                                   // key derived: "LastLaunch"
    @StoredModel("profile") var profile: Profile                     // a whole model under one key
}

/// `value   (from user file)`: a value and the layer it comes from.
func described<Value>(_ value: Value, _ source: SettingsLayer?) -> String {
    "\(value)   (from \(source?.name ?? "the default in code"))"
}

/// Starts this program again with `arguments` (step 5's other process), returning its pid.
func startSelf(_ arguments: [String]) throws -> pid_t {
    #if os(Linux)
    let program = "/proc/self/exe"
    #else
    let program = CommandLine.arguments[0]
    #endif
    let argv = ([program] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let environment: [UnsafeMutablePointer<CChar>?] = [nil]   // it needs none: it is given the file
    var pid = pid_t()
    let result = posix_spawn(&pid, program, nil, nil, argv, environment)
    guard result == 0 else { throw SpawnError(code: result) }
    return pid
}

/// `posix_spawn` failed with `code` (an `errno` value).
struct SpawnError: Error { let code: Int32 }

/// The exit status of the child `pid`, or `nil` when it has not exited within 5 seconds.
/// Polled without blocking (a blocking `waitpid` would hold one of Swift's few pool threads).
func exitStatus(of pid: pid_t) async -> Int32? {
    for _ in 0..<250 {
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { return (status >> 8) & 0xFF }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return nil
}

/// `SettingsExample --set-theme FILE THEME`: step 5's other process. It changes one key of FILE
/// as any program using Settings does (its own store, the file's advisory lock, an atomic save)
/// and exits.
func setTheme(file: String, to theme: String) async throws {
    let store = SettingsStore.file(URL(filePath: file), externalChanges: .ignored)
    store["theme"] = .string(theme)
    try await store.flush()
}

func run(arguments: [String]) async throws {
    let here = URL(filePath: #filePath).deletingLastPathComponent()
    let file = SettingsStore.defaultFileURL(application: "SettingsExample")
    let directory = file.deletingLastPathComponent()
    let profileFile = directory.appending(path: "profile.plist")

    if arguments.contains("--reset") {
        // The files and their companion folders (`.settings.plist.meta`: history, provenance,
        // schema), so that the history starts again at version 1.
        let companions = [file, profileFile].map { URL(filePath: PlistFile.companionDirectory(for: $0.path)) }
        for url in [file, profileFile] + companions where FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.removeItem(at: url)
            print("--reset: removed \(url.path)")
        }
    }

    // Diagnostics (missing defaults, wrong types, rules) go to standard error unless replaced.
    SettingsDiagnostics.handler = { diagnostic in print("   diagnostic: \(diagnostic.message)") }

    print("Settings file: \(file.path)")
    print("(the default location: $XDG_CONFIG_HOME/<app>/settings.plist, ~/.config when unset)")

    print("\n1. A store on that file, with defaults from Defaults.plist:")
    let store = SettingsStore.file(file)
    let settings = SettingsStore.bind(AppSettings(), to: store)
    let warnings = try store.registerDefaults(contentsOf: here.appending(path: "Defaults.plist"), checking: settings)
    print("   registered; \(warnings.count) setting(s) without a default anywhere (reported above)")

    print("\n2. What earlier runs saved (each value and the layer it comes from):")
    if let last = settings.lastLaunch {
        print("   this is launch \(settings.launchCount + 1); the last one was at \(last)")
    } else {
        print("   first run: nothing saved yet, so every value comes from the defaults")
    }
    print("   launchCount = \(described(settings.launchCount, settings.$launchCount.source))")
    print("   autoPlay    = \(described(settings.autoPlay, settings.$autoPlay.source))")
    print("   timeout     = \(described(settings.timeout, settings.$timeout.source))")
    print("   theme       = \(described(settings.theme.rawValue, settings.$theme.source))")
    print("   accent      = \(described(settings.accent.hex, settings.$accent.source))")
    print("   proxy       = \(described(settings.proxy ?? "nil", settings.$proxy.source))")
    print("   profile     = \(settings.profile.name), favourites \(settings.profile.favourites)")

    print("\n3. Observing: a callback with the new and old value, for changes from any source:")
    let observation = settings.$theme.onChange { new, old in print("   theme changed: \(old.rawValue) -> \(new.rawValue)") }
    print("   watching theme: the write in step 4 prints \"theme changed: old -> new\" at once")

    print("\n4. Writing settings and a model: in memory at once, durable after flush():")
    settings.autoPlay = true
    settings.theme = settings.theme == Theme.dark ? Theme.light : Theme.dark
    settings.launchCount += 1
    // Whole seconds: an XML plist keeps dates to the second, so this is exactly what comes back.
    settings.lastLaunch = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    settings.profile.name = "Ada"
    settings.profile.favourites = ["jazz", "piano"]
    try await store.flush()
    print("   autoPlay = \(described(settings.autoPlay, settings.$autoPlay.source)), launchCount = \(settings.launchCount)")
    print("   \(store.persistenceStatus.fileWrites) file write(s) so far (writes are coalesced); \(file.path) now holds:")
    observation.cancel()   // callbacks for this process's writes run at once, on the writing thread
    let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
    print(text.split(separator: "\n").map { "   | " + $0 }.joined(separator: "\n"))

    print("\n5. Another process edits the file (this program, started again to change one key); this one reloads it:")
    let changes = store.changes                      // observing starts here
    let child = try startSelf(["--set-theme", file.path, settings.theme == Theme.dark ? "light" : "dark"])
    let change = await withTaskGroup(of: SettingsChange?.self) { group in
        group.addTask { for await change in changes { return change }; return nil }
        // Never wait forever; the bound is generous because the wait ends at the change (a busy
        // machine, or a sanitizer's build, once took more than 5 s to start the other process).
        group.addTask { try? await Task.sleep(for: .seconds(30)); return nil }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
    print("   the other process (pid \(child)) \(await exitStatus(of: child).map { "exited with status \($0)" } ?? "did not exit within 5 s")")
    print("   change event: \(change.map(String.init(describing:)) ?? "none within 30 s")")
    print("   theme = \(described(settings.theme.rawValue, settings.$theme.source))")

    print("\n6. An override file (target-specific options) wins over the user's file:")
    settings.timeout = 60
    try store.loadOverrides(contentsOf: here.appending(path: "Overrides.plist"))
    print("   timeout = \(described(settings.timeout, settings.$timeout.source)); the user's 60 stays in the file")

    print("\n7. A model file of its own, saved atomically and loaded back:")
    var profile = settings.profile
    profile.isEditing = true
    try profile.save(to: profileFile)
    let loaded = try Profile.load(from: profileFile)
    print("   saved \(profileFile.path); loaded back: name = \(loaded.name), favourites = \(loaded.favourites), isEditing = \(loaded.isEditing) (transient)")

    print("\n8. A malformed plist gives an error with its file, line and column:")
    let scratch = FileManager.default.temporaryDirectory.appending(path: "SettingsExample-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let broken = scratch.appending(path: "broken.plist")
    try Data("<plist><dict>\n  <key>a</key>\n  <integr>1</integr>\n</dict></plist>".utf8).write(to: broken)
    do {
        _ = try PlistValue(contentsOf: broken)
    } catch {
        print("   \(error)")
    }
    try await store.flush()
    print("\nRun it again: the values above come back from \(file.path).")
    print("Start over with: swift run SettingsExample --reset")
    print("Inspect the files with: swift run settings read \(file.path)")
    print("                        swift run settings print --json \(profileFile.path)")
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.count == 3, arguments[0] == "--set-theme" {
        try await setTheme(file: arguments[1], to: arguments[2])
    } else if arguments.count == 3, arguments[0] == "--watch", let seconds = Int(arguments[2]) {
        try await watch(file: arguments[1], seconds: seconds)
    } else {
        try await run(arguments: arguments)
    }
} catch {
    print("SettingsExample failed: \(error)")
    exit(1)
}
