import SettingsPlist
import Testing
@testable import Settings

/// The walks over two dictionaries that the store's announcements, restores and registrations
/// use: what they list, in which order, and that they loop rather than recurse on the depth
/// (the changed leaves themselves: `PlistDictionaryChangedLeavesTests`).
@Suite("Changed key paths and deep merges")
struct PlistDictionaryChangesTests {
    private let old: PlistDictionary = ["a": 1, "n": ["x": 1, "y": ["deep": true]], "gone": ["p": 1, "q": 2], "same": "s"]
    private let new: PlistDictionary = ["a": 2, "n": ["x": 1, "y": "flat", "z": 3], "added": ["r": ["s": 1]], "same": "s"]

    @Test func differingPathsStopAtTheFirstDifferenceBelowSharedDictionaries() {
        var paths: [SettingsKey] = []
        new.collectDifferingPaths(from: old, prefix: ["root"], into: &paths)
        #expect(paths.map(\.description) == ["root/a", "root/n/y", "root/n/z", "root/added", "root/gone"])
    }

    @Test func mergedOverLaysDictionariesDeeplyTheUpperSideWinning() {
        let merged = new.merged(over: old)
        #expect(merged == ["a": 2, "n": ["x": 1, "y": "flat", "z": 3], "gone": ["p": 1, "q": 2], "same": "s", "added": ["r": ["s": 1]]])
        #expect(PlistDictionary().merged(over: old) == old && old.merged(over: PlistDictionary()) == old)
    }

    @Test func walksTwiceAsDeepAsAnyReaderAcceptsGiveTheDeepestPaths() {
        // Readers refuse files nested deeper than 512 levels; the walks are loops with their own
        // stack, so depth costs them memory, not the thread's stack.
        let depth = PlistNesting.maximumDepth * 2
        func nested(_ leaf: PlistValue) -> PlistDictionary {
            var value = leaf
            for _ in 0..<depth { value = .dictionary(["k": value]) }
            return value.dictionaryValue ?? [:]
        }
        let lower = nested(1)
        let upper = nested(2)
        let path = Array(repeating: "k", count: depth)
        #expect(upper.changedLeafPaths(from: lower) == [SettingsKey(components: path)])
        var differing: [SettingsKey] = []
        upper.collectDifferingPaths(from: lower, prefix: [], into: &differing)
        #expect(differing == [SettingsKey(components: path)])
        #expect(upper.merged(over: lower).value(at: path) == 2)
    }
}
