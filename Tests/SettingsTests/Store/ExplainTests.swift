#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import Settings
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

struct ExplainTests {
    @Test func everyLayerIsListedTopToBottomWithItsSourceAndTheWinner() throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["Network": ["timeout": 30]]).write(to: dir.file("Defaults.plist"))
        try PlistValue.dictionary(["Network": ["timeout": 45]]).write(to: dir.file("Overrides.plist"))
        try PlistValue.dictionary(["Network": ["timeout": 60]]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        try store.registerDefaults(contentsOf: dir.file("Defaults.plist"))
        try store.loadOverrides(contentsOf: dir.file("Overrides.plist"))
        store.applyArguments(["app", "-Network/timeout", "5"])

        let explanation = store.explain("Network/timeout")
        #expect(explanation.value == 5)
        #expect(explanation.rows.map(\.layer) == ["volatile", "overrides", "user", "defaults"])
        #expect(explanation.rows.map(\.value) == [5, 45, 60, 30])
        #expect(explanation.winner == 0)
        #expect(maskingTimes(explanation.description) == """
            Network/timeout = 5 (from volatile: command-line argument -Network/timeout)
            * volatile   command-line argument -Network/timeout: 5
              overrides  \(dir.file("Overrides.plist").path): 45
              user       \(dir.file().path): 60 (changed on disk (edited by hand, or by a program that records no provenance), seen at TIME)
              defaults   \(dir.file("Defaults.plist").path): 30
            """)
    }

    @Test func theGuidesExampleIsWhatItPrints() {
        // Docs/DefaultsAndLayers.md, "Where a value comes from".
        let store = SettingsStore.inMemory(["Network": ["timeout": 60]])
        store.register(defaults: ["Network": ["timeout": 30]])
        store.setVolatile(5, for: "Network/timeout")
        #expect(store.explain("Network/timeout").description == """
            Network/timeout = 5 (from volatile: set in code)
            * volatile   set in code: 5
              overrides  none registered: not set
              user       in memory: 60
              defaults   in code: 30
            """)
    }

    @Test func defaultsInCodeAndAMissingKeyAreExplained() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["volume": 0.5])
        #expect(store.explain("volume").rows.last?.source == "in code")
        #expect(store.explain("volume").rows.last?.value == 0.5)

        let missing = store.explain("Audio/volume")
        #expect(missing.value == nil)
        #expect(missing.missingReason == "there is no namespace 'Audio'")
        #expect(missing.description.hasPrefix("Audio/volume: no value in any layer (there is no namespace 'Audio')"))
    }

    @Test func secretsAreRedactedInTheTextAndTheRenameIsNamed() throws {
        let store = SettingsStore.inMemory(["apiToken": "s3cret"])
        store.registerRename(of: "Service/apiToken", formerly: ["apiToken"])
        let explanation = store.explain("Service/apiToken")
        #expect(explanation.value == "s3cret")  // the value itself is there for the program
        #expect(!explanation.description.contains("s3cret"))
        #expect(explanation.description.contains("<redacted>"))
        #expect(explanation.formerly == ["apiToken"])
        #expect(explanation.description.contains("renamed: formerly 'apiToken'"))
        #expect(explanation.redacted.plist["value"] == "<redacted>")
        #expect(explanation.redacted.plist["layer"] == "user")
        #expect(explanation.redacted.jsonText.contains(#""value": "<redacted>""#))
    }

    @Test func aFileStoreWritesItsLayersManifestBesideItsFile() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["a": 1]).write(to: dir.file("Defaults.plist"))
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        try store.registerDefaults(contentsOf: dir.file("Defaults.plist"))
        store.registerRename(of: "Network/timeout", formerly: ["timeout"])
        store.applyEnvironment(prefix: "MANIFESTAPP", [:])
        try #require(store.backend).executor.runAndWait { store.writeLayersManifest() }  // the same work the store's thread was asked to do

        let manifest = try #require(try PlistLayersManifest.read(beside: dir.file().path))
        #expect(manifest.defaultsFiles == [dir.file("Defaults.plist").path])
        #expect(manifest.renames == [.init(key: "Network/timeout", formerly: ["timeout"])])
        #expect(manifest.environmentPrefix == "MANIFESTAPP")
        #expect(manifest.currentName(of: "timeout") == "Network/timeout")
        #expect(FileManager.default.fileExists(atPath: dir.url.appending(path: ".settings.plist.meta/layers.plist").path))
    }

    /// A new user's first run: the application's directory does not exist yet. The manifest is
    /// written (so `settings explain` sees every layer at once) and nothing is reported.
    @Test func aFirstRunWritesItsManifestSilently() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["a": 1]).write(to: dir.file("Defaults.plist"))
        let file = dir.url.appending(path: "config/MyApp/settings.plist")
        let store = SettingsStore.file(file, autosaveDelay: nil)
        let reported = Mutex<[SettingsDiagnostic]>([])
        store.diagnosticsHandler = { d in reported.withLock { $0.append(d) } }
        try store.registerDefaults(contentsOf: dir.file("Defaults.plist"))
        try #require(store.backend).executor.runAndWait { store.writeLayersManifest() }  // the same work the store's thread was asked to do
        #expect(reported.withLock { $0 }.isEmpty, "\(reported.withLock { $0 })")
        let manifest = try #require(try PlistLayersManifest.read(beside: file.path))
        #expect(manifest.defaultsFiles == [dir.file("Defaults.plist").path])
        var s = stat()
        #expect(stat(file.deletingLastPathComponent().path, &s) == 0 && s.st_mode & 0o777 == 0o700)
    }

    @Test func anInMemoryOrUnregisteredStoreWritesNoManifest() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        store["a"] = 1
        try await store.flush()
        #expect(!FileManager.default.fileExists(atPath: dir.url.appending(path: ".settings.plist.meta/layers.plist").path))
    }

    @Test func aSettingsExplanationNamesItsRules() throws {
        let store = SettingsStore.inMemory(["volume": 3])
        let setting = Setting<Int>("volume", default: 1, store: store, rules: .clamp(0...2))
        let explanation = try #require(setting.explanation)
        #expect(explanation.rules == ["clamp(0...2)"])
        #expect(explanation.description.hasSuffix("\nrules on read: clamp(0...2)"))
        #expect(setting.wrappedValue == 2)
    }

    @Test func registeringTheSameDefaultsAgainKeepsOneRecord() throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["a": 1]).write(to: dir.file("Defaults.plist"))
        let store = SettingsStore.inMemory()
        for round in 0..<100 {
            store.register(defaults: ["b": .integer(PlistInteger(Int64(round)))])
            store.register(defaults: ["c": 1])
            try store.registerDefaults(contentsOf: dir.file("Defaults.plist"))
        }
        #expect(store.values.storage.locked { $0.sources.defaults.count } == 2)
        #expect(store.explain("b").rows.last?.value == 99)
    }
}
