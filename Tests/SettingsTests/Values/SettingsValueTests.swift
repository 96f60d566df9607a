import Foundation
import Settings
import Testing
import SettingsTestSupport

/// An enum and a Codable struct that only declare `SettingsValue`: the transformers come from
/// the protocol's extensions.
enum PolishMode: String, Sendable, SettingsValue { case fast, safe }
struct PolishLimits: Codable, Equatable, Sendable, SettingsValue { var files = 3 }
struct PolishModel: SettingsModel {
    @Archived var mode = PolishMode.safe
    @Archived var limits = PolishLimits()
}

/// Types that declare `SettingsValue`, and `PlistValue`s made from Swift values.
struct SettingsValueTests {
    /// `@Setting`, `SettingsStore.Key`, `value(_:default:)` and `@Archived` accept the same types:
    /// an enum or Codable struct that declares `SettingsValue` works in every one of them.
    @Test func aDeclaredSettingsValueWorksInEveryAPI() throws {
        let store = SettingsStore.inMemory(["mode": "fast", "limits": ["files": 9]])
        #expect(store.value("mode", default: PolishMode.safe) == .fast)
        #expect(store.value("limits", default: PolishLimits()) == PolishLimits(files: 9))
        #expect(store[SettingsStore.Key("mode", default: PolishMode.safe)] == .fast)
        let setting = Setting("mode", default: PolishMode.safe, store: store)
        #expect(setting.wrappedValue == .fast)
        setting.wrappedValue = .safe
        #expect(store["mode"] == "safe")
        let optional = Setting<PolishLimits?>("limits", store: store)
        #expect(optional.wrappedValue == PolishLimits(files: 9))
        #expect(ReadOnlySetting("limits", default: PolishLimits(), store: store).wrappedValue.files == 9)

        let temporary = try TemporaryDirectory()
        let dir = temporary.url
        var model = PolishModel()
        model.mode = .fast
        model.limits.files = 5
        try model.save(to: dir.appending(path: "model.plist"))
        #expect(try PlistValue(contentsOf: dir.appending(path: "model.plist")) == ["mode": "fast", "limits": ["files": 5]])
        let loaded = try PolishModel.load(from: dir.appending(path: "model.plist"))
        #expect(loaded.mode == .fast && loaded.limits.files == 5)
    }

    @Test func plistValuesFromSwiftValues() {
        let count = 7, ratio = 0.25, enabled = true, name = "Ada", big = UInt64.max, small = Int64.min
        #expect(PlistValue(count) == .integer(PlistInteger(Int64(7))))
        #expect(PlistValue(ratio) == .real(0.25))
        #expect(PlistValue(enabled) == .bool(true))
        #expect(PlistValue(name) == .string("Ada"))
        #expect(PlistValue(big) == .integer(PlistInteger(UInt64.max)))
        #expect(PlistValue(small) == .integer(PlistInteger(Int64.min)))
    }
}
