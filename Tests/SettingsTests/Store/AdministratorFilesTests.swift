import Foundation
import SettingsPlist
import SettingsFiles
import SettingsTesting
import Testing
@testable import Settings
import SettingsTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A temporary administrator's layout: system directories `sys1`, `sys2` (most important first)
/// and the user's file, in one temporary directory (under the sticky, root-owned /tmp).
private struct AdminLayout {
    let dir: TemporaryDirectory
    let app = "App"

    init() throws { dir = try TemporaryDirectory() }

    var systemDirectories: [String] { [dir.path("sys1"), dir.path("sys2")] }
    var userURL: URL { dir.file("home/\(app)/settings.plist") }

    /// Writes `body` (inside `<plist>`) to `sys/App/name`, owner-only writable.
    @discardableResult
    func system(_ sys: String, _ name: String, _ body: String) throws -> String {
        try FileManager.default.createDirectory(at: dir.file("\(sys)/\(app)"), withIntermediateDirectories: true)
        return try dir.writePlist("\(sys)/\(app)/\(name)", body).path
    }

    /// A file store of `App` reading the system directories (pinned: the test's environment is
    /// not changed).
    func store() -> SettingsStore {
        var options = PersistenceOptions()
        options.systemFiles = .application(app, directories: .fixed(systemDirectories))
        return SettingsStore.file(userURL, autosaveDelay: nil, externalChanges: .ignored, options: options)
    }
}

/// A model whose `theme` field an administrator locks.
private struct LockedProfile: SettingsModel, Codable, Equatable {
    var name = "Guest"
    var theme = "light"
}

@Suite("Administrator's files: system defaults and locked keys")
struct AdministratorFilesTests {
    @Test func systemDefaultsSitBetweenTheUserFileAndRegisteredDefaultsEarlierDirectoriesWinning() throws {
        let layout = try AdminLayout()
        try layout.system("sys1", "settings.plist", "<dict><key>theme</key><string>dark</string></dict>")
        try layout.system("sys2", "settings.plist", "<dict><key>theme</key><string>light</string><key>font</key><string>Mono</string></dict>")
        let store = layout.store()
        store.register(defaults: ["theme": "system-default", "font": "Sans", "size": 12])
        #expect(store["theme"] == "dark")
        #expect(store.source(of: "theme") == .system)
        #expect(store["font"] == "Mono")
        #expect(store["size"] == 12)
        store["theme"] = "user"  // the user may still override system defaults
        #expect(store["theme"] == "user" && store.source(of: "theme") == .user)
        let text = store.explain("font").description
        let lines = text.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("* system \(layout.dir.path("sys2"))/App/settings.plist: Mono"), "\(text)")
        #expect(lines.contains("system \(layout.dir.path("sys1"))/App/settings.plist: not set"), "\(text)")
    }

    @Test func aLockedKeyWinsOverEveryLayerAndRefusesEveryWriteKeepingTheUsersValue() async throws {
        let layout = try AdminLayout()
        let locks = try layout.system("sys2", "locked.plist", "<dict><key>Network</key><dict><key>proxy</key><string>http://proxy:3128</string></dict></dict>")
        try FileManager.default.createDirectory(at: layout.userURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try PlistValue.dictionary(["Network": ["proxy": "mine", "timeout": 5]]).write(to: layout.userURL)
        let store = layout.store()
        let recorder = SettingsDiagnosticsRecorder(recording: store)
        #expect(store.applyArguments(["app", "-Network/proxy", "from-argument"]).isEmpty)
        _ = store.applyEnvironment(prefix: "APP", ["APP_NETWORK__PROXY": "from-environment"])
        #expect(store["Network/proxy"] == "http://proxy:3128")
        #expect(store.source(of: "Network/proxy") == .locked)
        #expect(store.isWritable("Network/proxy") == false)
        #expect(store.isWritable("Network") == false)         // a namespace holding a lock
        #expect(store.isWritable("Network/timeout"))
        #expect(store.lockingFile(of: "Network/proxy") == locks)

        // set throws, naming the file; the subscript and removeValue report it.
        let error = try #require(throws: SettingsError.self) { try store.set("other", for: "Network/proxy") }
        #expect(error.code == .locked && error.path == locks)
        #expect(error.description == "key 'Network/proxy' is locked by \(locks); nothing was changed")
        #expect(throws: SettingsError.self) { try store.set(["proxy": "x"], for: "Network") }
        store["Network/proxy"] = "subscript"
        store.removeValue(for: "Network/proxy")
        #expect(recorder.diagnostics(of: .writeRefused).count == 2)
        #expect(recorder.diagnostics(of: .writeRefused).allSatisfy { $0.message.contains("is locked by \(locks)") })
        // A transaction touching a locked key is refused whole: its other writes are not made.
        let refused = try #require(throws: SettingsError.self) {
            try store.transaction { settings in
                settings["Network/timeout"] = 7
                settings["Network/proxy"] = "transaction"
            }
        }
        #expect(refused.code == .locked && refused.path == locks)
        #expect(store["Network/timeout"] == 5)
        try store.set(9, for: "Network/timeout")  // an unlocked key beside it is written

        // The user's value is ignored, not deleted: it is in the layer and in the file.
        #expect(store.value(for: "Network/proxy", in: .user) == "mine")
        try await store.flush()
        #expect(try PlistValue(contentsOf: layout.userURL)["Network"]?["proxy"] == "mine")
        #expect(try PlistValue(contentsOf: layout.userURL)["Network"]?["timeout"] == 9)
        let explanation = store.explain("Network/proxy").description
        #expect(explanation.hasPrefix("Network/proxy = http://proxy:3128 (from locked: \(locks))"), "\(explanation)")
        #expect(explanation.contains("(locked by \(locks))"))
        // Removing every user value keeps the user's value of a locked key too.
        store.removeAllUserValues()
        #expect(store.value(for: "Network/timeout", in: .user) == nil)
        #expect(store.value(for: "Network/proxy", in: .user) == "mine")
        try await store.flush()
        #expect(try PlistValue(contentsOf: layout.userURL)["Network"] == ["proxy": "mine"])
    }

    @Test func aSettingsSetterOnALockedKeyLeavesTheValueAndReportsWriteRefused() throws {
        let layout = try AdminLayout()
        try layout.system("sys1", "locked.plist", "<dict><key>autoUpdate</key><false/></dict>")
        let store = layout.store()
        let recorder = SettingsDiagnosticsRecorder(recording: store)
        let setting = Setting("autoUpdate", default: true, store: store)
        let free = Setting("volume", default: 0.5, store: store)
        #expect(setting.wrappedValue == false)
        #expect(setting.projectedValue.isWritable == false)
        #expect(free.projectedValue.isWritable)
        setting.wrappedValue = true
        #expect(setting.wrappedValue == false)
        #expect(store.value(for: "autoUpdate", in: .user) == nil)
        let refused = recorder.diagnostics(of: .writeRefused)
        #expect(refused.count == 1 && refused.first?.key == "autoUpdate")
        free.wrappedValue = 0.8
        #expect(free.wrappedValue == 0.8)
    }

    @Test func aStoredModelUnderALockIsRefusedWhole() throws {
        let layout = try AdminLayout()
        try layout.system("sys1", "locked.plist", "<dict><key>Profile</key><dict><key>theme</key><string>corporate</string></dict></dict>")
        let store = layout.store()
        let recorder = SettingsDiagnosticsRecorder(recording: store)
        let model = StoredModel<LockedProfile>("Profile", store: store)
        #expect(model.wrappedValue.theme == "corporate")
        #expect(model.projectedValue.isWritable == false)
        model.wrappedValue = LockedProfile(name: "Ada", theme: "neon")
        #expect(model.wrappedValue.theme == "corporate")
        #expect(store.value(for: "Profile", in: .user) == nil)
        #expect(recorder.diagnostics(of: .writeRefused).count == 1)
    }

    @Test func restoringAGenerationThatWouldChangeALockedKeyIsRefusedWhole() async throws {
        let layout = try AdminLayout()
        let store = layout.store()
        try store.set("light", for: "theme")
        try store.set(1, for: "volume")
        try await store.flush()
        let first = try #require(try await store.history().last).number
        try store.set("dark", for: "theme")
        try store.set(2, for: "volume")
        try await store.flush()
        let before = try Data(contentsOf: layout.userURL)
        try layout.system("sys1", "locked.plist", "<dict><key>theme</key><string>corporate</string></dict>")
        await store.reload()
        await #expect(throws: SettingsError.self) { try await store.restore(first) }
        do {
            try await store.restore(first)
        } catch {
            #expect(error.code == .locked && error.description.contains("locked.plist"))
        }
        // Nothing restored: not the locked key, and not the other key of the same generation.
        #expect(store.value(for: "theme", in: .user) == "dark" && store["volume"] == 2)
        #expect(try Data(contentsOf: layout.userURL) == before)
        // Restoring only keys the lock leaves alone still works.
        try await store.restore(first, keys: ["volume"])
        #expect(store["volume"] == 1)
    }

    @Test func aLockChangeIsAnnouncedWithItsOwnOriginAndAsAWritabilityChange() async throws {
        let layout = try AdminLayout()
        try layout.system("sys1", "settings.plist", "<dict><key>theme</key><string>dark</string></dict>")
        let store = layout.store()
        #expect(store["theme"] == "dark")
        let stream = store.changes
        var changes = stream.makeAsyncIterator()
        // The lock holds the value the key already has: only its writability changes.
        try layout.system("sys1", "locked.plist", "<dict><key>theme</key><string>dark</string></dict>")
        await store.reload()
        let locked = try #require(await changes.next())
        #expect(locked.origin == .locks && locked.keys == ["theme"])
        #expect(!store.isWritable("theme"))
        try FileManager.default.removeItem(atPath: layout.dir.path("sys1/App/locked.plist"))
        try layout.system("sys1", "settings.plist", "<dict><key>theme</key><string>light</string></dict>")
        await store.reload()
        // The new system default was hidden by the lock until the lock went: one change.
        let unlocked = try #require(await changes.next())
        #expect(unlocked.origin == .locks && unlocked.keys == ["theme"])
        #expect(store.isWritable("theme") && store["theme"] == "light")
    }

    // MARK: Only the administrator decides

    @Test func filesAnotherUserOwnsOrCanWriteAreIgnoredWithOneDiagnosticNamingTheReason() async throws {
        let cases: [(String, (AdminLayout, String) throws -> Void)] = [
            ("belongs to user 65534", { _, file in #expect(chown(file, 65534, 65534) == 0) }),
            ("is writable by everyone", { layout, _ in #expect(chmod(layout.dir.path("sys1/App"), 0o777) == 0) }),
            ("is writable by its group", { _, file in #expect(chmod(file, 0o664) == 0) }),
            ("belongs to user 65534", { layout, _ in #expect(chown(layout.dir.path("sys1"), 65534, 65534) == 0) }),
        ]
        try #require(geteuid() == 0, "needs root to give files to another user")
        for (reason, plant) in cases {
            let layout = try AdminLayout()
            let file = try layout.system("sys1", "locked.plist", "<dict><key>theme</key><string>forced</string></dict>")
            try plant(layout, file)
            let store = layout.store()
            let recorder = SettingsDiagnosticsRecorder(recording: store)
            store["theme"] = "mine"
            #expect(store["theme"] == "mine", "\(reason)")
            #expect(store.isWritable("theme"))
            let problems = recorder.diagnostics(of: .fileError)
            #expect(problems.count == 1, "\(reason): \(problems)")
            #expect(problems.first?.message.contains("\(file): ignored, not the administrator's file") == true)
            #expect(problems.first?.message.contains(reason) == true, "\(problems)")
            await store.reload()
            #expect(recorder.diagnostics(of: .fileError).count == 1, "reported once while it lasts")
        }
    }

    @Test func aLinkPlantedByAnotherUserIsNotFollowedButRootsLinkIs() throws {
        try #require(geteuid() == 0, "needs root to give a link to another user")
        let layout = try AdminLayout()
        let real = try layout.dir.writePlist("real-locks.plist", "<dict><key>theme</key><string>forced</string></dict>").path
        try FileManager.default.createDirectory(atPath: layout.dir.path("sys1/App"), withIntermediateDirectories: true)
        let link = layout.dir.path("sys1/App/locked.plist")
        #expect(symlink(real, link) == 0)
        #expect(layout.store()["theme"] == "forced")  // root's own link: followed
        #expect(lchown(link, 65534, 65534) == 0)
        let store = layout.store()
        let recorder = SettingsDiagnosticsRecorder(recording: store)
        #expect(store["theme"] == nil)
        #expect(recorder.diagnostics(of: .fileError).first?.message.contains("\(link): ignored") == true)
    }

    @Test func aLocksFileThatDoesNotParseIsReportedAndARunningStoreKeepsTheLocksItRead() async throws {
        let layout = try AdminLayout()
        let file = try layout.system("sys1", "locked.plist", "<dict><key>theme</key><string>forced</string></dict>")
        let store = layout.store()
        let recorder = SettingsDiagnosticsRecorder(recording: store)
        #expect(store["theme"] == "forced")
        try Data("<plist><dict><key>theme".utf8).write(to: URL(filePath: file))
        await store.reload()
        #expect(store["theme"] == "forced" && !store.isWritable("theme"))
        #expect(recorder.diagnostics(of: .fileError).first?.message.hasPrefix(file) == true)
        // A store that starts while the file is broken has no lock to keep, and says so.
        let fresh = layout.store()
        let freshRecorder = SettingsDiagnosticsRecorder(recording: fresh)
        #expect(fresh["theme"] == nil)
        #expect(freshRecorder.diagnostics(of: .fileError).count == 1)
    }

    @Test func locksAreReadFromThePinnedDirectoryWhateverTheEnvironmentSays() {
        let env = ["XDG_CONFIG_DIRS": "/home/ada/fake:relative"]
        let (defaults, locks) = PlistSystemLayers.SystemDirectories.environment.resolved { env[$0] }
        #expect(defaults == ["/home/ada/fake"])
        #expect(locks == ["/etc/xdg", "/home/ada/fake"])
        #expect(PlistSystemLayers.SystemDirectories.fixed(["/opt/policy/"]).resolved { env[$0] } == (["/opt/policy"], ["/opt/policy"]))
        #expect(SettingsLocations.systemDirectories { _ in nil } == ["/etc/xdg"])
        #expect(SettingsLocations.systemDirectories { $0 == "XDG_CONFIG_DIRS" ? "/a/:/b:/a" : nil } == ["/a", "/b"])
    }

    @Test func theSharedStoreReadsTheAdministratorsFilesOfItsApplicationOnly() {
        var options = PersistenceOptions()
        #expect(options.systemFiles == .automatic)
        let app = SettingsStore.file(SettingsStore.defaultFileURL(application: "SomeApp"))
        #expect(app.systemApplication == "SomeApp")
        let elsewhere = SettingsStore.file(URL(filePath: "/tmp/x/SomeApp/settings.plist"))
        #expect(elsewhere.systemApplication == nil)
        options.systemFiles = .none
        #expect(SettingsStore.file(SettingsStore.defaultFileURL(application: "SomeApp"), options: options).systemApplication == nil)
    }
}

@Suite("Administrator's edits seen by a running program")
struct AdministratorEditsLiveTests {
    /// The administrator installs a system default, locks the key, breaks the locks file, and
    /// removes it, while the program runs: each step reaches it, announced with its own origin,
    /// and its write to the locked key is refused naming the file.
    @Test(.timeLimit(hangLimit)) func aRunningProgramSeesSystemDefaultsAndALockComeAndGo() throws {
        let dir = try TemporaryDirectory()
        let system = dir.path("xdg")
        try FileManager.default.createDirectory(atPath: system + "/App", withIntermediateDirectories: true)
        // `App`'s store at its default place, reading the administrator's files of the
        // `XDG_CONFIG_DIRS` it was given: a line for each change of its key.
        let watcher = try RunningProgram(Fault.executable, ["admin-watch", "App", "theme"],
                                         environment: ["XDG_CONFIG_DIRS": system, "XDG_CONFIG_HOME": dir.path("home")])
        #expect(watcher.line() == "ready nil true")

        try dir.writePlist("xdg/App/settings.plist.new", "<dict><key>theme</key><string>dark</string></dict>")
        #expect(rename(dir.path("xdg/App/settings.plist.new"), system + "/App/settings.plist") == 0)
        #expect(watcher.line() == "change systemDefaults \"dark\" true")

        let locks = system + "/App/locked.plist"
        try dir.writePlist("xdg/App/locked.new", "<dict><key>theme</key><string>corporate</string></dict>")
        #expect(rename(dir.path("xdg/App/locked.new"), locks) == 0)
        #expect(watcher.line() == "change locks \"corporate\" false")
        #expect(watcher.line() == "refused key 'theme' is locked by \(locks); nothing was changed")

        try dir.write("xdg/App/broken.new", "<plist><dict><key>theme")
        #expect(rename(dir.path("xdg/App/broken.new"), locks) == 0)
        #expect(watcher.line()?.hasPrefix("diagnostic \(locks):") == true)  // the lock is kept, and the file named

        #expect(unlink(locks) == 0)
        #expect(watcher.line() == "change locks \"dark\" true")
    }
}
