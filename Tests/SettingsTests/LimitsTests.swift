import Dispatch
import Foundation
@testable import Settings
import SettingsFiles
import SettingsPlist
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The size and depth limits: what no reader could read back is never held or written, and what
/// is too big or too deep to read is refused clearly, by the store, its migrations and model files.
@Suite("Size and depth limits")
struct LimitsTests {
    // MARK: - Writes no reader could read back are refused
    // A store never holds, and never writes, what its next load would refuse: keys and values
    // nested deeper than the readers' 512 levels, values larger than the settings file may be.

    /// A key of `count` components, each unique to the test.
    private func deepKey(_ count: Int, _ tag: String = UUID().uuidString) -> SettingsKey {
        SettingsKey(components: [tag] + Array(repeating: "n", count: count - 1))
    }

    private func nested(_ levels: Int) -> PlistValue {
        var value = PlistValue.string("leaf")
        for _ in 0..<levels { value = .array([value]) }
        return value
    }

    @Test func aKeyDeeperThanReadersAcceptIsRefusedAndTheFileStaysLoadable() async throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil)
        store["keep"] = "me"
        let key = deepKey(600)
        store[key] = "too deep"
        #expect(store[key] == nil)
        let reports = DiagnosticsRecorder.diagnostics(for: key)
        #expect(reports.map(\.kind) == [.writeRefused])
        #expect(reports.first?.message.contains("600 components") == true)
        try await store.flush()

        // Before: the file flushed fine, and the next start moved it aside as too deep.
        let next = SettingsStore.file(url, autosaveDelay: nil)
        #expect(next["keep"] == "me")
        #expect(next.loadError == nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(!names.contains { $0.contains("corrupt") })
    }

    @Test func aTwentyThousandComponentKeyIsRefusedWithoutCrashing() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let key = deepKey(20_000)
        // Before: SIGSEGV, recursion in PlistDictionary.setValue.
        store[key] = 1
        store.setVolatile(2, for: key)
        store.applyToUserLayer([(key, PlistValue(3))])
        #expect(store[key] == nil)
        #expect(store.value(for: key, in: .volatile) == nil)
        let reports = DiagnosticsRecorder.diagnostics(for: key)
        #expect(reports.count == 3)
        #expect(reports.allSatisfy { $0.kind == .writeRefused })
        // One readable line, not a 40 KB key.
        #expect(reports.allSatisfy { $0.message.utf8.count < 600 })
    }

    @Test func theDeepestKeyReadersAcceptIsKeptAndReadBack() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil)
        let key = deepKey(PlistNesting.maximumDepth)  // 512 dictionaries: the file's top one and 511 namespaces
        store[key] = "deepest"
        #expect(store[key] == "deepest")
        try await store.flush()
        let next = SettingsStore.file(url, autosaveDelay: nil)
        #expect(next[key] == "deepest")
        #expect(next.loadError == nil)
        // One more level, in the key or in the value, is refused.
        DiagnosticsRecorder.start()
        let deeper = deepKey(PlistNesting.maximumDepth + 1)
        store[deeper] = "no"
        #expect(store[deeper] == nil)
        store[key] = .array([])
        #expect(store[key] == "deepest")
    }

    @Test func aValueNestedTooDeepUnderItsKeyIsRefused() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let key = SettingsKey("WriteLimits-\(UUID().uuidString)/inner")
        store[key] = nested(600)
        #expect(store[key] == nil)
        #expect(DiagnosticsRecorder.diagnostics(for: key).map(\.kind) == [.writeRefused])
        store[key] = nested(510)  // 2 dictionaries and 510 arrays: exactly 512 levels
        #expect(store[key] != nil)
    }

    @Test func defaultsAndOverridesNestedTooDeepAreRefusedWhole() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let tag = "WriteLimitsDefaults-\(UUID().uuidString)"
        store.register(defaults: [tag: nested(600)])
        store.addOverrides([tag: nested(600)])
        #expect(store[SettingsKey(tag)] == nil)
        #expect(DiagnosticsRecorder.diagnostics(containing: tag).count == 2)
    }

    @Test func aValueLargerThanTheFileMayBeIsRefused() async throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, options: PersistenceOptions(maximumFileSize: 4096))
        let key = SettingsKey("big-\(UUID().uuidString)")
        store[key] = .data(Data(count: 10_000))
        #expect(store[key] == nil)
        #expect(DiagnosticsRecorder.diagnostics(for: key).first?.message.contains("4096 bytes") == true)
    }

    @Test func aSaveThatWouldMakeTheFileTooLargeLeavesTheFileAsItWas() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let options = PersistenceOptions(maximumFileSize: 4096)
        let store = SettingsStore.file(url, autosaveDelay: nil, options: options)
        store["first"] = "kept"
        try await store.flush()
        let before = try Data(contentsOf: url)
        // Each value fits; together they do not.
        for i in 0..<10 { store["v\(i)"] = .string(String(repeating: "x", count: 1000)) }
        await #expect(throws: SettingsError.self) { try await store.flush() }
        #expect(try Data(contentsOf: url) == before)
        #expect(store["v9"] != nil)  // still in memory
        let next = SettingsStore.file(url, autosaveDelay: nil, options: options)
        #expect(next["first"] == "kept")
        #expect(next.loadError == nil)
    }

    // MARK: - One size limit
    // One size limit (`PlistFile.maximumSize`) for the store, model files and the `settings` tool
    // (its side: `FileSafetyCLITests.importRefusesAFileTheLibraryCouldNotLoad`).

    @Test func theStoresDefaultLimitIsPlistFilesLimit() {
        #expect(PersistenceOptions().maximumFileSize == PlistFile.maximumSize)
    }

    @Test func theStoreNeverWritesAFileItCouldNotLoadAgain() async throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["small": 1]).write(to: dir.file())
        let before = try Data(contentsOf: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(maximumFileSize: 1024))
        // Each value fits (a single value over the limit is refused at write time:
        // WriteLimitsTests); together they do not.
        for i in 0..<4 { store["big\(i)"] = .string(String(repeating: "x", count: 500)) }
        do {
            try await store.flush()
            Issue.record("saved a file larger than the limit")
        } catch {
            #expect(error.description.contains("larger than the limit of 1.0 KiB (1024 bytes)"))
        }
        #expect(try Data(contentsOf: dir.file()) == before)
        #expect(store["big3"]?.stringValue?.count == 500)  // kept in memory
    }

    @Test func aHugeSparseFileIsRefusedWithBothSizesAndLeftAlone() async throws {
        let dir = try TemporaryDirectory()
        let fd = open(dir.file().path, O_RDWR | O_CREAT, 0o600)
        #expect(ftruncate(fd, 60 << 30) == 0)  // 60 GiB, sparse
        close(fd)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store["a"] == nil)
        let error = try #require(store.loadError)
        #expect(error.description.contains(dir.file().path))
        #expect(error.description.contains("60.0 GiB") && error.description.contains("64.0 MiB"))
        store["a"] = 1
        await #expect(throws: SettingsError.self) { try await store.flush() }
        #expect(try FileManager.default.attributesOfItem(atPath: dir.file().path)[.size] as? Int == 60 << 30)
    }

    @Test func theSizeLimitIsConfigurable() throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["big": .string(String(repeating: "x", count: 4000))]).write(to: dir.file())
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil, options: PersistenceOptions(maximumFileSize: 1024))
        #expect(store["big"] == nil)
        #expect(store.loadError?.description.contains("1.0 KiB (1024 bytes)") == true)
    }

    // MARK: - Migrations are held to the write limits
    // A migration is one more way values reach the user layer: one that leaves values nested
    // deeper than readers accept is refused whole, as a too-deep write is, instead of being stored
    // and making every later save of the file fail.

    @Test func aMigrationThatNestsTooDeepIsRefusedAndLaterSavesStillWork() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil)
        store["keep"] = "me"
        try await store.flush()
        let deep = nested(600)
        let migrations = SettingsMigrations { m in
            m.step(toVersion: 1) { dictionary in dictionary["deep"] = deep }
        }
        // Before: migrated, and then every flush failed ("nested deeper than 512") forever.
        #expect(throws: SettingsError.self) { try store.migrate(with: migrations) }
        #expect(store[SettingsKey("deep")] == nil)
        #expect(store[SettingsKey(SettingsMigrations.versionKey)] == nil)  // nothing was changed
        store["after"] = 1
        try await store.flush()
        let next = SettingsStore.file(url, autosaveDelay: nil)
        #expect(next.loadError == nil)
        #expect(next["keep"] == "me")
        #expect(next["after"] == 1)
    }

    @Test func aMigrationAtTheDeepestLevelReadersAcceptIsKept() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil)
        let deepest = nested(PlistNesting.maximumDepth - 1)  // the file's dictionary and 511 arrays
        let migrations = SettingsMigrations { m in
            m.step(toVersion: 1) { dictionary in dictionary["deep"] = deepest }
        }
        #expect(try store.migrate(with: migrations) == 0)
        try await store.flush()
        let next = SettingsStore.file(url, autosaveDelay: nil)
        #expect(next.loadError == nil)
        #expect(next[SettingsKey("deep")] == deepest)
    }

    // MARK: - Models: limits
    // Models nested a thousand levels deep, huge arrays, repeated diagnostics: bounded, never a crash.

    @Test(.timeLimit(hangLimit)) func aThousandLevelsDeepDoNotCrashAndWhatIsSavedLoadsBack() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("deep.plist")
        var chain = AttackDeep.Chain.end
        for i in 0..<1_000 { chain = .link(i, chain) }
        var model = AttackDeep()
        model.chain = chain
        do {
            try model.save(to: url)
        } catch {
            // Refusing is fine if the message is clear and nothing was written.
            #expect(error.description.contains("deep") || error.description.contains("nest"), "unclear: \(error)")
            #expect(!FileManager.default.fileExists(atPath: url.path))
            return
        }
        // Written: then this program must be able to read its own file back.
        #expect(try AttackDeep.load(from: url) == model)
    }

    @Test(.timeLimit(hangLimit)) func aFileNestedAThousandLevelsDeepIsRefusedClearlyAndKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("deep.plist")
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>label</key><string>x</string><key>extra</key>"
        xml += String(repeating: "<array>", count: 1_000) + String(repeating: "</array>", count: 1_000)
        xml += "</dict></plist>"
        try Data(xml.utf8).write(to: url)
        #expect {
            try AttackDeep.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path) && "\(error)".contains("deep")
        }
        var model = AttackDeep()
        model.label = "new"
        try model.save(to: url)
        let aside = try corruptCopies(in: dir, of: "deep.plist")
        #expect(aside.count == 1)
        if let first = aside.first { #expect(try Data(contentsOf: dir.file(first)) == Data(xml.utf8)) }
    }

    @Test(.timeLimit(hangLimit)) func aHugeArrayWithEveryElementBadIsKeptWhole() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("huge.plist")
        let bad = (0..<30_000).map { i -> PlistValue in ["host": .integer(PlistInteger(Int64(i)))] }
        try PlistValue.dictionary(["name": "n", "servers": .array(bad)]).write(to: url, format: .binary)
        // 30,000 reports, one per bad element (that each report costs the same is checked by
        // `reportingDiagnosticsCostsTheSameEachTime`, by how the cost grows, not by a clock).
        var fleet = try Fleet.load(from: url)
        #expect(fleet.servers.isEmpty)
        #expect(fleet.name == "n")
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad))
        fleet.name = "m"
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad))
        // Appending one server must not throw away the 30,000 this program cannot read.
        fleet.servers.append(Fleet.Server(host: "new", port: 1))
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad + [["host": "new", "port": 1]]))
        #expect(try Fleet.load(from: url).servers == [Fleet.Server(host: "new", port: 1)])
    }

    @Test(.timeLimit(hangLimit)) func reportingDiagnosticsCostsTheSameEachTime() {
        let store = SettingsStore.inMemory([:])
        store.diagnosticsHandler = { _ in }
        // Reading a handler is what piled up thunks (the mutex's `inout` wrote it back
        // re-abstracted), so each report cost more than the last: 30,000 of each took about 25 s.
        // Only read here: setting the process-wide one would race other tests.
        let ratio = growth(from: 3_000, to: 30_000) { count in
            for _ in 0..<count {
                _ = SettingsDiagnostics.handler
                store.diagnosticsHandler?(SettingsDiagnostic(.typeMismatch, "x"))
            }
        }
        #expect(isLinear(ratio, from: 3_000, to: 30_000), "10x the reports cost \(ratio)x the time")
    }
}
