import SettingsPlist
import Testing

/// `PlistDictionary.changedLeaves(from:)`, the one rule for which leaves two dictionaries differ
/// in (a store's announcements, history and provenance, locks, the tool's edits), and
/// `PlistValue.forEachLeaf(at:_:)`, the walk under it.
struct PlistDictionaryChangedLeavesTests {
    private let old: PlistDictionary = ["a": 1, "n": ["x": 1, "y": ["deep": true]], "gone": ["p": 1, "q": 2], "same": "s"]
    private let new: PlistDictionary = ["a": 2, "n": ["x": 1, "y": "flat", "z": 3], "added": ["r": ["s": 1]], "same": "s"]

    @Test func listsAddedRemovedAndChangedLeavesInOrder() {
        // A dictionary replaced by a leaf counts the leaves on both sides; removed keys come after
        // the newer dictionary's own, level by level.
        #expect(new.changedLeaves(from: old) == [["a"], ["n", "y", "deep"], ["n", "y"], ["n", "z"], ["added", "r", "s"], ["gone", "p"], ["gone", "q"]])
        #expect(old.changedLeaves(from: old).isEmpty)
        #expect(PlistDictionary().changedLeaves(from: PlistDictionary()).isEmpty)
    }

    @Test func aLeafReplacedByADictionaryCountsBothSides() {
        let before: PlistDictionary = ["proxy": "h:8080", "other": 1]
        let after: PlistDictionary = ["proxy": ["host": "h:8080", "port": 80], "other": 1]
        #expect(after.changedLeaves(from: before) == [["proxy"], ["proxy", "host"], ["proxy", "port"]])
        #expect(before.changedLeaves(from: after) == [["proxy", "host"], ["proxy", "port"], ["proxy"]])
    }

    @Test func emptyDictionariesHaveNoLeaves() {
        let before: PlistDictionary = ["a": 1]
        let after: PlistDictionary = ["a": 1, "empty": .dictionary([:])]
        #expect(after.changedLeaves(from: before).isEmpty)
        let emptied: PlistDictionary = ["a": .dictionary([:])]
        #expect(emptied.changedLeaves(from: before) == [["a"]])
    }

    @Test func reorderedKeysWithEqualValuesAreNoChange() {
        let before: PlistDictionary = ["a": 1, "b": ["c": 2, "d": 3]]
        let after: PlistDictionary = ["b": ["d": 3, "c": 2], "a": 1]
        #expect(after.changedLeaves(from: before).isEmpty)
    }

    @Test func keysEqualOnlyInSwiftAreTwoKeys() {
        // Keys compare by code points, as CoreFoundation does: "é" precomposed and decomposed differ.
        let before: PlistDictionary = ["\u{E9}": 1]
        let after: PlistDictionary = ["e\u{301}": 1]
        #expect(after.changedLeaves(from: before) == [["e\u{301}"], ["\u{E9}"]])
    }

    @Test func walksTwiceAsDeepAsAnyReaderAcceptsWithoutRecursion() {
        let depth = PlistNesting.maximumDepth * 2
        func nested(_ leaf: PlistValue) -> PlistDictionary {
            var value = leaf
            for _ in 0..<depth { value = .dictionary(["k": value]) }
            return value.dictionaryValue ?? [:]
        }
        let path = Array(repeating: "k", count: depth)
        #expect(nested(2).changedLeaves(from: nested(1)) == [path])
        var visited: [[String]] = []
        PlistValue.dictionary(nested(1)).forEachLeaf { path, _ in visited.append(path) }
        #expect(visited == [path])
    }

    @Test func forEachLeafVisitsLeavesInOrderWithTheirValues() {
        var visited: [String] = []
        PlistValue.dictionary(["a": 1, "n": ["b": 2, "e": .dictionary([:]), "c": ["d": 3]], "z": "last"]).forEachLeaf(at: ["root"]) { path, value in
            visited.append(path.joined(separator: "/") + "=\(value)")
        }
        #expect(visited == ["root/a=1", "root/n/b=2", "root/n/c/d=3", "root/z=\"last\""])
        var single: [[String]] = []
        PlistValue.string("x").forEachLeaf(at: ["k"]) { path, _ in single.append(path) }
        #expect(single == [["k"]])
    }
}
