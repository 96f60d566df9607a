import Dispatch
import Foundation
@testable import Settings
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Waits (without sleeping) for the next change that satisfies `condition`.
func nextChange(
    _ iterator: inout AsyncStream<SettingsChange>.Iterator, where condition: (SettingsChange) -> Bool = { _ in true }
) async -> SettingsChange? {
    while let change = await iterator.next() {
        if condition(change) { return change }
    }
    return nil
}

@Suite("SettingsFile")
struct SettingsFileTests {
    @Test func newFileIsXMLOwnerOnlyInCreatedDirectories() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appending(path: "a/b/settings.plist")
        let store = SettingsStore.file(url, autosaveDelay: nil)
        store["volume"] = 0.5
        try await store.flush()
        let data = try Data(contentsOf: url)
        #expect(String(decoding: data.prefix(5), as: UTF8.self) == "<?xml")
        #expect(try dir.permissions(of: url) == 0o600)
        #expect(try PlistValue(decoding: data) == ["volume": 0.5])
    }

    @Test func binaryOnRequestAndAnExistingFilesFormatAndModeAreKept() async throws {
        let dir = try TemporaryDirectory()
        let binary = dir.file("b.plist")
        let store = SettingsStore.file(binary, format: .binary, autosaveDelay: nil)
        store["a"] = 1
        try await store.flush()
        #expect(try Data(contentsOf: binary).starts(with: Array("bplist00".utf8)))

        // An existing binary file with mode 0644 stays binary and 0644 even if XML is asked for.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: binary.path)
        let reopened = SettingsStore.file(binary, format: .xml, autosaveDelay: nil)
        #expect(reopened.format == .binary)
        reopened["b"] = 2
        try await reopened.flush()
        #expect(try Data(contentsOf: binary).starts(with: Array("bplist00".utf8)))
        #expect(try dir.permissions(of: binary) == 0o644)
        #expect(try PlistValue(contentsOf: binary) == ["a": 1, "b": 2])
    }

    @Test func aBurstOfTenThousandSetsIsAHandfulOfFileWrites() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file())
        for i in 0..<10_000 { store["counter"] = .integer(PlistInteger(Int64(i))) }
        try await store.flush()
        #expect(store.persistenceStatus.fileWrites <= 5)
        #expect(store.persistenceStatus.hasUnsavedChanges == false)
        #expect(try PlistValue(contentsOf: dir.file())["counter"] == 9999)
    }

    @Test func flushWithNothingChangedWritesNothing() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        try await store.flush()
        #expect(!FileManager.default.fileExists(atPath: dir.file().path))
        store["a"] = 1
        try await store.flush()
        try await store.flush()
        #expect(store.persistenceStatus.fileWrites == 1)
    }

    @Test func writersMergeOnlyTheKeysTheyChanged() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["shared": 0, "old": "x", "Net": ["a": 1, "b": 2]]).write(to: dir.file())
        // Two stores on one file stand for two processes: each saves only what it changed.
        let one = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        let two = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        one["fromOne"] = 1
        one["Net/a"] = 10
        two["fromTwo"] = 2
        two["Net/b"] = 20
        two.removeValue(for: "old")
        try await one.flush()
        try await two.flush()
        let onDisk = try PlistValue(contentsOf: dir.file())
        #expect(onDisk == ["shared": 0, "Net": ["a": 10, "b": 20], "fromOne": 1, "fromTwo": 2])
        // The second writer now also sees the first one's keys.
        #expect(two["fromOne"] == 1)
    }

    @Test(.timeLimit(hangLimit)) func externalChangesAreReloadedAndAnnouncedButOwnWritesAreNot() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        store.register(defaults: ["theme": "light"])
        var changes = store.changes.makeAsyncIterator()
        store["mine"] = 1
        try await store.flush()
        #expect(await changes.next() == SettingsChange(keys: ["mine"], origin: .write))

        let other = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        other["theme"] = "dark"
        try await other.flush()
        let change = await nextChange(&changes)
        #expect(change == SettingsChange(keys: ["theme"], origin: .externalFile))
        #expect(store["theme"] == "dark")
        #expect(store["mine"] == 1)

        // Replaced by rename (as editors and other tools save): still seen.
        var edited = try PlistValue(contentsOf: dir.file()).dictionaryValue ?? [:]
        edited["theme"] = "blue"
        try PlistValue.dictionary(edited).encoded(as: .xml).write(to: dir.file(), options: .atomic)
        #expect(await nextChange(&changes) == SettingsChange(keys: ["theme"], origin: .externalFile))
        #expect(store["theme"] == "blue")
        #expect(store.persistenceStatus.reloads >= 2)
    }

    @Test(.timeLimit(hangLimit)) func pollingNoticesExternalChanges() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .polling(.milliseconds(20)))
        var changes = store.changes.makeAsyncIterator()
        try PlistValue.dictionary(["polled": true]).write(to: dir.file())
        #expect(await nextChange(&changes) == SettingsChange(keys: ["polled"], origin: .externalFile))
        #expect(store["polled"] == true)
    }

    @Test(.timeLimit(hangLimit)) func unsavedLocalChangesWinOverAReload() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        var changes = store.changes.makeAsyncIterator()
        store["k"] = "local"                       // not saved yet
        _ = await changes.next()
        try PlistValue.dictionary(["k": "disk", "other": 1]).write(to: dir.file())
        #expect(await nextChange(&changes) == SettingsChange(keys: ["other"], origin: .externalFile))
        #expect(store["k"] == "local")
        try await store.flush()
        #expect(try PlistValue(contentsOf: dir.file()) == ["k": "local", "other": 1])
    }

    @Test func aCorruptFileIsMovedAsideReportedAndNeverOverwritten() async throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let broken = Data("<plist><dict>\n<key>a</key>\n<integr>1</integr></dict></plist>".utf8)
        try broken.write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        store.register(defaults: ["a": 5])
        #expect(store["a"] == 5)                                        // goes on with defaults
        let error = try #require(store.loadError)
        #expect(error.code == .invalidFile)
        #expect(error.description.contains("\(dir.file().path):3:"))  // file and line
        #expect(store.persistenceStatus.movedAside == nil)              // left alone until a save
        #expect(try Data(contentsOf: dir.file()) == broken)

        store["a"] = 6
        try await store.flush()                                         // still malformed after the settle: moved aside
        let aside = try #require(store.persistenceStatus.movedAside)
        #expect(aside.lastPathComponent.hasPrefix("settings.plist.corrupt-"))
        #expect(!DiagnosticsRecorder.diagnostics(containing: aside.path).isEmpty)
        #expect(try PlistValue(contentsOf: dir.file()) == ["a": 6])
        #expect(try Data(contentsOf: aside) == broken)
    }

    @Test func aFileCorruptedAfterLoadingIsMovedAsideAtTheNextSave() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        store["a"] = 1
        try await store.flush()
        try Data("garbage".utf8).write(to: dir.file())
        store["b"] = 2
        try await store.flush()
        #expect(try PlistValue(contentsOf: dir.file()) == ["a": 1, "b": 2])
        let aside = try #require(store.persistenceStatus.movedAside)
        #expect(try Data(contentsOf: aside) == Data("garbage".utf8))
    }

    @Test func aRootThatIsNotADictionaryIsTreatedAsCorrupt() throws {
        let dir = try TemporaryDirectory()
        try PlistValue.array([1, 2]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store.loadError?.description.contains("expected a dict") == true)
        #expect(store.persistenceStatus.movedAside == nil)
    }

    @Test func anUnreadableFileIsReportedAndLeftAlone() async throws {
        // A directory where the file should be stands for any file that cannot be read (tests may
        // run as root, which reads everything whatever its permissions).
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.file(), withIntermediateDirectories: true)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store.loadError?.code == .invalidFile)
        store["a"] = 1
        await #expect(throws: SettingsError.self) { try await store.flush() }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: dir.file().path, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(store.persistenceStatus.hasUnsavedChanges)
    }

    @Test func aFailedSaveKeepsTheChangesForTheNextOne() async throws {
        let dir = try TemporaryDirectory()
        let blocker = dir.url.appending(path: "blocker")
        try Data().write(to: blocker)                                  // a file where a directory must go
        let store = SettingsStore.file(blocker.appending(path: "settings.plist"), autosaveDelay: nil)
        store["a"] = 1
        await #expect(throws: SettingsError.self) { try await store.flush() }
        #expect(store.persistenceStatus.hasUnsavedChanges)
        try FileManager.default.removeItem(at: blocker)
        try await store.flush()
        #expect(try PlistValue(contentsOf: blocker.appending(path: "settings.plist")) == ["a": 1])
    }

    @Test func settingsWrittenThroughWrappersPersist() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file())
        let settings = ObservedSettings(store: store)
        settings.volume = 0.9
        settings.proxy = "proxy.example"
        try await store.flush()
        let reopened = ObservedSettings(store: SettingsStore.file(dir.file(), externalChanges: .ignored))
        #expect(reopened.volume == 0.9)
        #expect(reopened.proxy == "proxy.example")
        #expect(reopened.theme == "system")
    }

    @Test func emptyXDGAndHomeCountAsUnset() {
        let url = SettingsStore.defaultFileURL(application: "App", environment: ["XDG_CONFIG_HOME": "", "HOME": "/home/ada"])
        #expect(url.path == "/home/ada/.config/App/settings.plist")
        let fallback = SettingsStore.defaultFileURL(application: "App", environment: ["XDG_CONFIG_HOME": "", "HOME": ""])
        #expect(fallback.path.hasSuffix("/.config/App/settings.plist") && fallback.path.hasPrefix("/"))
        #expect(!fallback.path.hasPrefix("/.config"))
    }
}
