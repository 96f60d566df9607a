import Foundation
import SettingsPlist
import Testing
@testable import Settings
import SettingsTestSupport

/// A store never holds, and never writes, what its next load would refuse: keys and values
/// nested deeper than the readers' 512 levels, values larger than the settings file may be.
@Suite("Writes no reader could read back are refused")
struct WriteLimitsTests {
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
}
