import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `SettingsProvenanceLog` and `PlistHistory`: who set each leaf of a file, and its saved versions.
struct SettingsProvenanceLogTests {
    @Test func digestsAreStableAndTellValuesApart() {
        // The same in every process and version: FNV-1a over a type tag, a length and the UTF-8.
        #expect(SettingsProvenance.digest(of: "a") == SettingsProvenanceLogTests.fnv([1, 1, 0, 0, 0, 0, 0, 0, 0, 0x61]))
        #expect(SettingsProvenance.digest(of: "1") != SettingsProvenance.digest(of: 1))
        #expect(SettingsProvenance.digest(of: ["a", "b"]) != SettingsProvenance.digest(of: ["ab"]))
        #expect(SettingsProvenance.digest(of: ["k": 1]) != SettingsProvenance.digest(of: ["k": 2]))
    }

    static func fnv(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    @Test func aDeepValueIsDigestedWithoutRecursion() {
        // As deep as readers accept (a deeper tree's own destruction would recurse in the runtime).
        var value = PlistValue.string("leaf")
        for _ in 0..<PlistNesting.maximumDepth { value = .array([value]) }
        #expect(SettingsProvenance.digest(of: value) != SettingsProvenance.digest(of: "leaf"))
    }

    @Test func recordsLeavesAndReportsUnrecordedChangesAsChangedOnDisk() throws {
        var contents: PlistDictionary = ["Network": ["timeout": 30, "proxy": "p"], "volume": 1]
        var log = SettingsProvenanceLog()
        let writer = SettingsProvenance(origin: .write, process: "MyApp", pid: 4121, date: Date(timeIntervalSince1970: 100))
        log.record([["Network"], ["volume"]], in: contents, by: writer)
        #expect(log.entries.count == 3)
        let seen = Date(timeIntervalSince1970: 500)
        #expect(log.provenance(of: ["Network", "timeout"], in: contents, fileDate: seen)?.pid == 4121)
        #expect(log.provenance(of: ["Network", "timeout"], in: contents, fileDate: seen)?.summary == "set by MyApp pid 4121 at 1970-01-01 00:01:40 UTC")
        contents["volume"] = 2  // by a writer that records nothing
        let hand = try #require(log.provenance(of: ["volume"], in: contents, fileDate: seen))
        #expect(hand.origin == .changedOnDisk)
        #expect(hand.date == seen)
        #expect(log.unrecordedLeaves(in: contents) == [["volume"]])
        let noted = log.noteUnrecorded([["volume"]], in: contents, seenAt: seen)
        let notedAgain = log.noteUnrecorded([["volume"]], in: contents, seenAt: seen)
        #expect(noted)
        #expect(!notedAgain)  // already recorded
        #expect(log.provenance(of: ["missing"], in: contents, fileDate: seen) == nil)
        contents["Network"] = nil
        log.prune(to: contents)
        #expect(log.entries.keys.map { $0 } == [["volume"]])
    }

    @Test func aPruneAlongChangedKeysDropsExactlyWhatAWholePruneDrops() {
        let writer = SettingsProvenance(origin: .write, process: "MyApp", pid: 8, date: Date(timeIntervalSince1970: 20))
        var contents: PlistDictionary = ["flat": 1, "other": 2, "ns": ["a": 1, "b": ["c": 2]], "gone": 3]
        var log = SettingsProvenanceLog()
        log.record(contents.keys.map { [$0] }, in: contents, by: writer)
        // Changes of flat keys (found by look-ups) and inside a namespace (found by a walk),
        // each compared with a prune that looks at every entry.
        let changes: [((PlistDictionary) -> PlistDictionary, [[String]])] = [
            ({ var c = $0; c["gone"] = nil; return c }, [["gone"]]),
            ({ var c = $0; c["flat"] = ["now": "a namespace"]; return c }, [["flat"]]),
            ({ var c = $0; c["ns"] = "a leaf now"; return c }, [["ns"]]),
            ({ var c = $0; c["other"] = nil; c["new"] = ["x": ["y": 1]]; return c }, [["other"], ["new", "x", "y"]]),
            ({ var c = $0; c["new"] = 5; return c }, [["new"]]),
        ]
        for (change, keys) in changes {
            contents = change(contents)
            log.record(keys, in: contents, by: writer)
            var everything = log
            log.prune(to: contents, onlyAlong: keys)
            everything.prune(to: contents, onlyAlong: nil)
            #expect(log == everything, "after a change of \(keys)")
        }
        #expect(log.entries[["gone"]] == nil)
        #expect(log.entries[["flat"]] == nil && log.entries[["flat", "now"]] != nil)
        #expect(log.entries[["ns", "b", "c"]] == nil && log.entries[["ns"]] != nil)
        #expect(log.entries[["new", "x", "y"]] == nil && log.entries[["new"]] != nil)
    }

    @Test func theLogRoundTripsBesideTheFileOwnerOnly() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        try PlistValue.dictionary(["a/b": 1]).write(to: URL(filePath: target))
        var log = SettingsProvenanceLog()
        log.record([["a/b"]], in: ["a/b": 1], by: SettingsProvenance(origin: .tool, pid: 7, date: Date(timeIntervalSince1970: 0)))
        try log.save(for: target)
        #expect(try SettingsProvenanceLog.load(for: target) == log)
        var s = stat()
        #expect(lstat(SettingsProvenanceLog.path(for: target), &s) == 0)
        #expect(s.st_mode & 0o777 == 0o600)
        #expect(try SettingsProvenanceLog.describe(key: ["a/b"], inFileAt: target) == "set with the settings tool (pid 7) at 1970-01-01 00:00:00 UTC")
        #expect(try SettingsProvenanceLog.describe(key: ["nope"], inFileAt: target) == nil)
    }

    @Test func aCorruptLogReadsAsEmpty() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        let meta = try PlistFile.makeCompanionDirectory(for: target)
        try PlistFile.replace(meta + "/" + SettingsProvenanceLog.fileName, with: Array("<plist><dict><key>".utf8), permissions: 0o600)
        #expect(try SettingsProvenanceLog.load(for: target).entries.isEmpty)
    }

    @Test func historyKeepsTheNewestWithinCountAndByteBudget() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        let writer = SettingsProvenance(origin: .write, process: "MyApp", pid: 1, date: Date())
        for i in 1...5 {
            let bytes = try PlistValue.dictionary(["i": .integer(PlistInteger(Int64(i)))]).encoded(as: .xml)
            #expect(try PlistHistory.keep(bytes, changed: [["i"]], by: writer, for: target, limits: .init(count: 3)) == i)
        }
        let kept = try PlistHistory.list(for: target)
        #expect(kept.map(\.number) == [3, 4, 5])
        #expect(try kept.last?.contents() == ["i": 5])
        #expect(try PlistHistory.newest(for: target)?.number == 5)
        #expect(try PlistHistory.generation(2, for: target) == nil)
        let big = Data(count: 10_000)
        try PlistHistory.keep(big, changed: [], by: writer, for: target, limits: .init(count: 20, bytes: 5_000))
        #expect(try PlistHistory.list(for: target).map(\.number) == [6])  // over budget: only the newest
        #expect(try PlistHistory.keep(big, changed: [], by: writer, for: target, limits: .init(count: 0)) == nil)
    }

    @Test func aLinkInPlaceOfTheGenerationsDirectoryIsRefused() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        let meta = try PlistFile.makeCompanionDirectory(for: target)
        let elsewhere = dir.path("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        #expect(symlink(elsewhere, meta + "/" + PlistHistory.directoryName) == 0)
        #expect(throws: PlistFile.Failure.self) {
            try PlistHistory.keep(Data(), changed: [], by: SettingsProvenance(origin: .write, date: Date()), for: target)
        }
        #expect(throws: PlistFile.Failure.self) { try PlistHistory.list(for: target) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }
}
