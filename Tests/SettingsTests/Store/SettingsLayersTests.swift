@testable import Settings
import Testing

/// The layer rules on their own, without a store.
@Suite("Settings layers")
struct SettingsLayersTests {
    func layers(defaults: PlistDictionary = [:], user: PlistDictionary = [:], overrides: PlistDictionary = [:],
                volatile: PlistDictionary = [:]) -> SettingsLayers {
        var layers = SettingsLayers()
        layers.modify(.defaults) { $0 = defaults }
        layers.modify(.user) { $0 = user }
        layers.modify(.overrides) { $0 = overrides }
        layers.modify(.volatile) { $0 = volatile }
        return layers
    }

    @Test func theHighestLayerWinsAndSaysWhichItIs() {
        let l = layers(defaults: ["a": 1, "b": 1, "c": 1], user: ["a": 2, "b": 2], overrides: ["a": 3])
        #expect(l.resolve("a")?.value == 3 && l.resolve("a")?.layer == .overrides)
        #expect(l.resolve("b")?.value == 2 && l.resolve("b")?.layer == .user)
        #expect(l.resolve("c")?.layer == .defaults)
        #expect(l.resolve("d") == nil)
        #expect(l.resolve("a", from: .user)?.value == 2)
    }

    @Test func namespacesMergeWithTheLayersBelow() {
        let l = layers(defaults: ["Net": ["timeout": 30, "retries": 3]], user: ["Net": ["timeout": 60]])
        #expect(l.resolve("Net")?.value == ["timeout": 60, "retries": 3])
        #expect(l.resolve("Net")?.layer == .user)
        #expect(l.effectiveValues == ["Net": ["timeout": 60, "retries": 3]])
    }

    @Test func aWriteSaysWhichEffectiveValuesItChanged() {
        // Nothing above the user layer: the fast path for scalars.
        var l = layers(defaults: ["a": 1, "Net": ["timeout": 30]])
        #expect(l.write(1, at: "a", in: .user, comparing: true) == WriteEffect.none)   // same as the default below
        #expect(l.write(2, at: "a", in: .user, comparing: true) == .key)
        #expect(l.write(2, at: "a", in: .user, comparing: true) == nil)                // nothing changed
        #expect(l.write(nil, at: "a", in: .user, comparing: true) == .keys(["a"]))     // back to the default
        #expect(l.resolve("a")?.value == 1)
        #expect(l.write(["timeout": 60, "proxy": "p"], at: "Net", in: .user, comparing: true)
                == .keys(["Net", "Net/timeout", "Net/proxy"]))
        #expect(l.write(7, at: "Net", in: .user, comparing: true) == .keys(["Net"]))     // a namespace became a value
        #expect(l.write(3, at: "b", in: .user, comparing: false) == WriteEffect.none)  // not compared: only applied
        #expect(l[.user]["b"] == 3)
        // A value hidden by a higher layer changes nothing that reads see.
        var hidden = layers(defaults: ["a": 1], overrides: ["a": 9])
        #expect(hidden.write(5, at: "a", in: .user, comparing: true) == .keys([]))
        #expect(hidden.resolve("a")?.value == 9)
    }

    @Test func effectiveChangesCompareOneLayerBeforeAndAfter() {
        let before = layers(defaults: ["a": 1, "b": 1], user: ["a": 2])
        var after = before
        after.modify(.user) { $0 = ["b": 1, "c": 3] }
        #expect(Set(after.effectiveChanges(from: before, in: .user)) == ["a", "c"])  // b is the same value
    }

    @Test func aMissingKeyIsExplainedByThePartOfItsPathThatExists() {
        let l = layers(defaults: ["Net": ["Proxy": ["host": "h"]], "flag": true])
        #expect(l.explainMissing("top") == nil)
        #expect(l.explainMissing("Nope/x") == "there is no namespace 'Nope'")
        #expect(l.explainMissing("Net/Other/x") == "namespace 'Net' has no dictionary 'Other'")
        #expect(l.explainMissing("Net/Proxy/port") == "namespace 'Net/Proxy' has no key 'port'")
        #expect(l.explainMissing("flag/x") == "'flag' is a bool from registered defaults, not a namespace")
    }
}
