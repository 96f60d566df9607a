import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

// Attacks on the provenance several writers pass through the history journal (issue 29's
// review, 2026-11-28): writers taking turns with cached record entries, the journal removed or
// cut short behind their backs, planted records with hostile entries, and the targeted prune
// against a whole one. Each ends with a reader's fresh load agreeing with the writers.

/// Leaves of a dictionary.
private func leaves(_ d: PlistDictionary, _ prefix: [String] = []) -> [[String]] {
    var out: [[String]] = []
    for (k, v) in d {
        if case .dictionary(let inner) = v { out += leaves(inner, prefix + [k]) } else { out.append(prefix + [k]) }
    }
    return out
}

private let keyPool: [[String]] = [["a"], ["b"], ["c"], ["ns", "a"], ["ns", "b"], ["ns"], ["ns", "deep", "x"], ["x/y"], ["p", "q"], ["p"]]

struct ProvenanceAcrossWritersAttackTests {
    /// The journal removed (numbers start again) while writers hold cached record entries.
    @Test func journalNumbersStartingAgainDoNotLeakCachedEntries() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var a: PlistRecorder? = PlistRecorder(limits: .init())
        var b: PlistRecorder? = PlistRecorder(limits: .init())
        let tool = SettingsProvenance.thisProcess(.tool)
        let sync = SettingsProvenance.thisProcess(.sync, device: "S")
        for i in 0..<5 {
            try set(path, ["k\(i)"], 1, recorder: &a, by: tool)
            try set(path, ["k\(i)"], 2, recorder: &b, by: sync)
        }
        try FileManager.default.removeItem(atPath: PlistHistory.journal(for: path))
        try? FileManager.default.removeItem(atPath: SettingsProvenanceLog.path(for: path))
        // New numbers from 1: b writes generations 1...; a catches up on them.
        for i in 0..<3 { try set(path, ["n\(i)"], 3, recorder: &b, by: sync) }
        try set(path, ["z"], 4, recorder: &a, by: tool)
        let fresh = try SettingsProvenanceLog.load(for: path)
        #expect(a?.log?.entries == fresh.entries)
        for i in 0..<3 { #expect(fresh.entries[["n\(i)"]]?.origin == .sync, "n\(i)") }
        #expect(fresh.entries[["z"]]?.origin == .tool)
        for i in 0..<5 { #expect(fresh.entries[["k\(i)"]]?.origin != .tool, "k\(i) stale") }
        try set(path, ["y"], 5, recorder: &b, by: sync)
        let fresh2 = try SettingsProvenanceLog.load(for: path)
        #expect(b?.log?.entries == fresh2.entries)
        #expect(fresh2.entries[["z"]]?.origin == .tool)
    }

    /// Planted records with hostile provenance dictionaries.
    @Test func plantedHostileProvenanceIsIgnored() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var a: PlistRecorder? = PlistRecorder(limits: .init())
        let tool = SettingsProvenance.thisProcess(.tool)
        try set(path, ["a"], 1, recorder: &a, by: tool)
        try set(path, ["b"], 1, recorder: &a, by: tool)
        var huge = PlistDictionary()
        for i in 0..<20_000 { huge["h\(i)"] = .dictionary(["origin": "tool", "date": .date(Date())]) }
        var deep: PlistValue = "leaf"
        for _ in 0..<200 { deep = .dictionary(["d": deep]) }
        let hostile: [PlistDictionary] = [
            ["a": .integer(7), "b": .string("x"), "c": .array([1, 2]), "": .bool(false)],
            ["a": .dictionary(["origin": "nonsense", "date": 3])],
            ["a/../b": .dictionary(["origin": "sync", "date": .date(Date())]), "a\\/b": .dictionary(["origin": "sync", "date": .date(Date())]), "\\": .bool(false), "/": .bool(false), "a//": .bool(false)],
            huge,
            ["deep": deep],
        ]
        for (i, prov) in hostile.enumerated() {
            try plantRecord(.dictionary(["number": .integer(PlistInteger(Int64(100 + i))), "provenance": .dictionary(prov)]), besides: path)
        }
        try set(path, ["c"], 1, recorder: &a, by: tool)
        let fresh = try SettingsProvenanceLog.load(for: path)
        #expect(a?.log?.entries == fresh.entries)
        #expect(fresh.entries[["c"]]?.origin == .tool)
        #expect(fresh.entries[["a"]]?.origin == .tool || fresh.entries[["a"]] == nil)
        for k in fresh.entries.keys { #expect(k == ["a"] || k == ["b"] || k == ["c"], "entry for \(k)") }
    }

    /// A targeted prune equals a whole prune, for namespaced keys.
    @Test(arguments: 0..<40)
    func targetedPruneEqualsWholePrune(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &+ 1000)
        var contents = PlistDictionary()
        var targeted = SettingsProvenanceLog()
        var whole = SettingsProvenanceLog()
        let w = SettingsProvenance.thisProcess(.tool)
        for step in 0..<60 {
            var changed: [[String]] = []
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let key = keyPool.randomElement(using: &rng)!
                let value: PlistValue? = switch Int.random(in: 0..<4, using: &rng) {
                case 0: nil
                case 1: .dictionary(["z": 1, "deep": .dictionary(["x": 2])])
                default: .integer(PlistInteger(Int64(step)))
                }
                _ = contents.setValue(value, at: key[...])
                changed.append(key)
            }
            let leavesNow = leaves(contents)
            let recorded = changed.flatMap { c in leavesNow.filter { $0.starts(with: c) || c.starts(with: $0) } }
            targeted.prune(to: contents, onlyAlong: changed)
            whole.prune(to: contents, onlyAlong: nil)
            #expect(targeted.entries == whole.entries, "seed \(seed) step \(step) changed \(changed): \(Set(targeted.entries.keys).symmetricDifference(whole.entries.keys))")
            targeted.record(recorded, in: contents, by: w)
            whole.record(recorded, in: contents, by: w)
            // Also entries applied from a generation (catch-up) then pruned along.
            if Int.random(in: 0..<4, using: &rng) == 0 {
                var other = SettingsProvenanceLog()
                other.record(leavesNow, in: contents, by: .thisProcess(.sync))
                if let d = other.takeDelta() { targeted.apply(delta: d); whole.apply(delta: d) }
            }
        }
    }

    /// Journal removed after the log was written whole: does the next save's entry survive a fresh load?
    @Test(arguments: [1, 2])
    func journalRemovedAfterAWholeLog(writers: Int) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var rs: [PlistRecorder?] = [PlistRecorder(limits: .init()), PlistRecorder(limits: .init())]
        let tool = SettingsProvenance.thisProcess(.tool)
        let sync = SettingsProvenance.thisProcess(.sync, device: "S")
        for i in 0..<25 { try set(path, ["k\(i)"], 1, recorder: &rs[i % writers], by: tool) }
        try FileManager.default.removeItem(atPath: PlistHistory.journal(for: path))
        try set(path, ["k3"], 2, recorder: &rs[writers - 1], by: sync)
        let fresh = try SettingsProvenanceLog.load(for: path)
        #expect(fresh.entries[["k3"]]?.origin == .sync, "writers \(writers): k3 reads \(String(describing: fresh.entries[["k3"]]?.origin))")
        #expect(rs[writers - 1]?.log?.entries == fresh.entries, "writers \(writers): writer log differs")
    }

    /// A history journal cut short behind the writers' backs (a restore from an old backup, a
    /// truncation): the next generation's number may fall at or below the provenance log's
    /// mark, and what it carries must still be read back.
    @Test(arguments: [1, 2, 3])
    func aSaveAfterTheJournalWasCutIsReadBackWhateverItsNumber(writers: Int) throws {
        var failing: [Int] = []
        for n in 2..<70 {
            let dir = try TemporaryDirectory()
            let path = dir.path("settings.plist")
            var recorders: [PlistRecorder?] = (0..<writers).map { _ in PlistRecorder(limits: .init()) }
            let tool = SettingsProvenance.thisProcess(.tool)
            let sync = SettingsProvenance.thisProcess(.sync, device: "S")
            for i in 0..<n { try set(path, ["k\(i % 5)"], .integer(PlistInteger(Int64(i))), recorder: &recorders[i % writers], by: tool) }
            let journal = PlistHistory.journal(for: path)
            let bytes = try Data(contentsOf: URL(filePath: journal))
            try bytes.prefix(bytes.count / 2).write(to: URL(filePath: journal))
            try set(path, ["k1"], "last", recorder: &recorders[n % writers], by: sync)
            let fresh = try SettingsProvenanceLog.load(for: path)
            if fresh.entries[["k1"]]?.origin != .sync {
                failing.append(n)
            } else if recorders[n % writers]?.log?.entries != fresh.entries {
                failing.append(-n)  // the writer's own log disagrees with a reader's
            }
        }
        #expect(failing.isEmpty, "\(writers) writers: after n = \(failing) saves")
    }
}
