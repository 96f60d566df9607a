#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Observation
@testable import Settings
import SettingsPlist
import SettingsTestSupport
import SettingsTesting
import Testing

/// The shortcuts an `@Setting` write takes (issue 29 part 4): a built-in scalar's stored case
/// built without the conversion's closures, and the tracked-key summary that lets a write of a
/// key nobody tracks skip the look-up. Each must store and announce exactly what the long way does.
struct SettingWritePathTests {
    // MARK: Built-in scalars (a locked key's refusal: AdministratorFilesTests)

    @Test func builtInScalarsStoreWhatTheirTransformersStore() throws {
        func check<T: SettingsValue>(_ values: [T]) throws {
            let builtIn = try #require(BuiltInScalar(T.self), "\(T.self) is a built-in scalar")
            for value in values {
                #expect(builtIn.plist(value) == (try T.settingsTransformer.encode(value)), "\(T.self) \(value)")
            }
        }
        try check([false, true])
        try check([0, 1, -1, Int.min, Int.max])
        try check([0.0, -0.0, 0.1, .infinity, -.infinity, .greatestFiniteMagnitude])
        try check(["", "Ada", "e\u{301}", "\u{E9}", String(repeating: "long ", count: 40)])
        try check([Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1.5e9 + 0.25)])
        try check([Data(), Data([0, 1, 255])])
    }

    @Test func otherTypesTakeTheirTransformer() {
        #expect(BuiltInScalar(Int64.self) == nil)
        #expect(BuiltInScalar(Float.self) == nil)
        #expect(BuiltInScalar(URL.self) == nil)
        #expect(BuiltInScalar(Int?.self) == nil)
        #expect(BuiltInScalar(SettingsColor.self) == nil)
        // A value of another type than the case's is not converted.
        #expect(BuiltInScalar.int.plist("1") == nil)
    }

    @Test func aNaNIsStoredAsTheTransformerStoresIt() throws {
        // NaN is not equal to itself, so compare the stored bits.
        guard case .real(let direct)? = BuiltInScalar.double.plist(Double.nan),
              case .real(let converted) = try Double.settingsTransformer.encode(.nan) else {
            Issue.record("a Double is stored as a real")
            return
        }
        #expect(direct.bitPattern == converted.bitPattern)
    }

    @Test func settingsOfEachBuiltInTypeWriteTheirValues() {
        let store = SettingsStore.inMemory()
        let flag = Setting("wp.flag", default: false, store: store)
        let count = Setting("wp.count", default: 0, store: store)
        let ratio = Setting("wp.ratio", default: 0.5, store: store)
        let name = Setting("wp.name", default: "", store: store)
        let when = Setting("wp.when", default: Date(timeIntervalSinceReferenceDate: 0), store: store)
        let blob = Setting("wp.blob", default: Data(), store: store)
        flag.wrappedValue = true
        count.wrappedValue = 42
        ratio.wrappedValue = 0.25
        name.wrappedValue = "Ada"
        when.wrappedValue = Date(timeIntervalSinceReferenceDate: 100)
        blob.wrappedValue = Data([1, 2])
        #expect(store["wp.flag"] == .bool(true))
        #expect(store["wp.count"] == .integer(42))
        #expect(store["wp.ratio"] == .real(0.25))
        #expect(store["wp.name"] == .string("Ada"))
        #expect(store["wp.when"] == .date(Date(timeIntervalSinceReferenceDate: 100)))
        #expect(store["wp.blob"] == .data(Data([1, 2])))
        #expect((flag.wrappedValue, count.wrappedValue, name.wrappedValue) == (true, 42, "Ada"))
    }

    @Test func aSettingWithItsOwnTransformerOrRulesDoesNotTakeTheShortcut() {
        let store = SettingsStore.inMemory()
        let asText = SettingsTransformer<Int>(typeName: "Int as text", encode: { .string(String($0)) },
                                              decode: { $0.stringValue.flatMap { Int($0) } })
        let text = Setting("wp.text", default: 0, store: store, transformer: asText)
        let clamped = Setting("wp.clamped", default: 0, store: store, rules: .clamp(0...10))
        text.wrappedValue = 7
        clamped.wrappedValue = 99
        #expect(store["wp.text"] == .string("7"))
        #expect(store["wp.clamped"] == .integer(10))
        #expect(text.wrappedValue == 7)
    }

    @Test func aKeyTooDeepIsRefusedForAnIntegerToo() {
        let store = SettingsStore.inMemory()
        let recorder = SettingsDiagnosticsRecorder(recording: store)
        let key = SettingsKey(components: (0...PlistNesting.maximumDepth).map { "n\($0)" })
        let deep = Setting(key, default: 0, store: store)
        deep.wrappedValue = 1
        #expect(store[key] == nil)
        let refused = recorder.diagnostics(of: .writeRefused)
        #expect(refused.count == 1 && refused.first?.key == key)
    }

    // MARK: Tracked keys

    @Test func keysOneInsideAnotherShareTheirRootHash() {
        let root = SettingsKey("Network").rootHash
        #expect(SettingsKey("Network/timeout").rootHash == root)
        #expect(SettingsKey(components: ["Network", "Proxy", "host"]).rootHash == root)
        // The first component as the path writes it: an escaped slash is part of it.
        #expect(SettingsKey(#"a\/b"#).rootHash == SettingsKey(components: ["a/b", "c"]).rootHash)
        // Equal keys, however built, have equal ones (a marked secret included).
        #expect(SettingsKey.secret("Network/token").rootHash == SettingsKey("Network/token").rootHash)
    }

    @Test func theSummaryNeverMissesARelatedKey() {
        var tracked = TrackedKeys()
        let keyPath: any ObservedKeyPath = \SettingsStore.[observed: "Audio/volume"]
        tracked.insert(keyPath, for: "Audio/volume")
        for key: SettingsKey in ["Audio", "Audio/volume", "Audio/volume/left", "Audio/other"] {
            #expect(tracked.mayRelate(to: key), "\(key)")
        }
        // Most unrelated first components are told apart without a look-up (one bit of 64 is
        // set: about one in 64 shares it).
        let unrelated = (0..<256).filter { !tracked.mayRelate(to: SettingsKey("other\($0)/x")) }
        #expect(unrelated.count > 128)
    }

    @Test func writesAroundATrackedKeyStillReachTheObservationFramework() {
        let store = SettingsStore.inMemory()
        let volume = Setting("Audio/volume", default: 0.5, store: store)
        let left = Setting("Audio/volume/left", default: 0, store: store)
        let other = Setting("Video/volume", default: 0, store: store)
        let fired = Received<String>()
        func track() {
            withObservationTracking { _ = volume.wrappedValue } onChange: { fired.append("volume") }
        }
        track()
        other.wrappedValue = 3                 // another namespace: not told
        #expect(fired.all.isEmpty)
        volume.wrappedValue = 0.7              // the key itself
        #expect(fired.all.count == 1)
        track()
        store["Audio"] = ["volume": 0.9]       // the namespace above it
        #expect(fired.all.count == 2)
        track()
        store["Audio"] = nil
        left.wrappedValue = 2                  // below it: the scalar became a namespace
        #expect(fired.all.count == 3)
    }

    @Test func aBurstOfWritesToOneKeyIsRecordedOnce() {
        var unsaved = UnsavedChanges()
        unsaved.tracksChanges = true
        let first = unsaved.markDirty("a")  // the first change: the store is to be kept alive
        var gainedAgain = 0
        for _ in 0..<10_000 where unsaved.markDirty("a") { gainedAgain += 1 }
        #expect(first && gainedAgain == 0)
        _ = unsaved.markDirty("b")
        _ = unsaved.markDirty("a")
        #expect(unsaved.dirty == ["a", "b", "a"])
    }

    @Test func aWriteNobodyHearsOfStillMovesTheGeneration() {
        let store = SettingsStore.inMemory()
        let watched = Setting("wp.watched", default: 0, store: store)
        let unheard = Setting("wp.unheard", default: 0, store: store)
        _ = watched.wrappedValue  // tracked: the store has an audience, though not for this key
        let before = store.generation
        unheard.wrappedValue = 9
        #expect(store.generation > before)
        #expect(unheard.wrappedValue == 9)
        let after = store.generation
        unheard.wrappedValue = 9  // unchanged: no new generation
        #expect(store.generation == after)
    }
}
