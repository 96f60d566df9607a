import Testing
@testable import Settings

struct SettingRulesTests {
    @Test func whenNilSuppliesAValueForMissingOnes() {
        let store = SettingsStore.inMemory()
        let s = Setting<Int?>("rules.whenNil", store: store, rules: SettingRules<Int>().whenNil(use: 10))
        #expect(s.wrappedValue == 10)
        store["rules.whenNil"] = 3
        #expect(s.wrappedValue == 3)
    }

    @Test func ensureAndWhenNilChainOnReadAndWrite() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let rules = SettingRules<Int>().whenNil(use: 10).ensure(that: { $0 >= 10 }, otherwise: 10)
        let s = Setting<Int?>("rules.min10", store: store, rules: rules)
        s.wrappedValue = 8
        #expect(s.wrappedValue == 10)
        #expect(store["rules.min10"] == 10)
        #expect(DiagnosticsRecorder.diagnostics(for: "rules.min10").map(\.message) == ["rule ensure changed the value written to 'rules.min10'"])
        s.wrappedValue = 11
        #expect(s.wrappedValue == 11)
        store["rules.min10"] = 2  // hand-edited file: the read still obeys the rule
        #expect(s.wrappedValue == 10)
    }

    /// Palau's `ensure(when: isBad, use: x)` replaces the values for which the condition is true;
    /// written the Palau way, it must mean the same here (it used to mean the opposite).
    @Test func ensureWhenHasPalausMeaning() {
        let store = SettingsStore.inMemory()
        let lessThan10: @Sendable (Int) -> Bool = { $0 < 10 }
        let s = Setting<Int?>("rules.palau", store: store, rules: SettingRules<Int>().whenNil(use: 10).ensure(when: lessThan10, use: 10))
        #expect(s.wrappedValue == 10)
        s.wrappedValue = 8
        #expect(s.wrappedValue == 10)
        #expect(store["rules.palau"] == 10)
        s.wrappedValue = 11
        #expect(s.wrappedValue == 11)
        store["rules.palau"] = 3
        #expect(s.wrappedValue == 10)
    }

    @Test func rulesStartWithStaticMembers() {
        let store = SettingsStore.inMemory()
        let retries = Setting<Int?>("rules.static", store: store, rules: .whenNil(use: 3).ensure(that: { $0 >= 1 }, otherwise: 1))
        #expect(retries.wrappedValue == 3)
        retries.wrappedValue = 0
        #expect(retries.wrappedValue == 1)
        let level = Setting("rules.static.level", default: 5, store: store, rules: .ensure(when: { $0 > 9 }, use: 9))
        level.wrappedValue = 12
        #expect(level.wrappedValue == 9)
        let positive = Setting("rules.static.positive", default: 1, store: store, rules: .ensure(that: { $0 > 0 }, otherwise: 1))
        positive.wrappedValue = -4
        #expect(positive.wrappedValue == 1)
    }

    @Test func clampKeepsValuesInRange() {
        let store = SettingsStore.inMemory()
        let s = Setting("rules.volume", default: 0.5, store: store, rules: .clamp(0...1))
        s.wrappedValue = 1.5
        #expect(store["rules.volume"] == 1.0)
        store["rules.volume"] = -3.0
        #expect(s.wrappedValue == 0)
    }
}
