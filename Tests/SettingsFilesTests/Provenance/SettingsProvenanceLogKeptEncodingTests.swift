import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

/// `SettingsProvenanceLog.save(for:keepingEncoding:)`: a save that encodes only the entries changed
/// since the last save or load writes a log that reads back the same as a full save's.
struct SettingsProvenanceLogKeptEncodingTests {
    let mine = SettingsProvenance(origin: .write, process: "MyApp", pid: 8, date: Date(timeIntervalSince1970: 20))
    let theirs = SettingsProvenance(origin: .sync, process: "Other", pid: 9, date: Date(timeIntervalSince1970: 30), device: "3F2A")

    /// A file's contents of `count` keys, and a log of them all set by `mine`, saved beside
    /// `target` with its encoding kept.
    private func savedLog(of count: Int, for target: String) throws -> (PlistDictionary, SettingsProvenanceLog) {
        var contents = PlistDictionary()
        for i in 0..<count { contents["k\(i)"] = .integer(PlistInteger(Int64(i))) }
        var log = SettingsProvenanceLog()
        log.record(contents.keys.map { [$0] }, in: contents, by: mine)
        try log.save(for: target, keepingEncoding: true)
        return (contents, log)
    }

    @Test func everyKindOfChangeReadsBackAsAFullSaveWouldWriteIt() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        var contents: PlistDictionary = ["n": ["a": 1, "b/c": 2], "x": 3]
        for i in 0..<40 { contents["k\(i)"] = .integer(PlistInteger(Int64(i))) }
        let tool = SettingsProvenance(origin: .tool, process: "settings", pid: 7, date: Date(timeIntervalSince1970: 10))
        let app = SettingsProvenance(origin: .write, process: "MyApp", pid: 8, date: Date(timeIntervalSince1970: 20))
        var log = SettingsProvenanceLog()
        log.record(contents.keys.map { [$0] }, in: contents, by: tool)
        try log.save(for: target, keepingEncoding: true)
        #expect(try SettingsProvenanceLog.load(for: target) == log)

        // Changed, added and removed entries, one save each.
        contents["x"] = 4
        log.record([["x"]], in: contents, by: app)
        try log.save(for: target, keepingEncoding: true)
        #expect(try SettingsProvenanceLog.load(for: target) == log)
        contents["new"] = ["deep": "v"]
        log.record([["new"]], in: contents, by: app)
        contents["n"] = nil
        log.prune(to: contents)
        try log.save(for: target, keepingEncoding: true)
        #expect(try SettingsProvenanceLog.load(for: target) == log)
        #expect(log.entries[["new", "deep"]]?.origin == .write)
        #expect(log.entries[["n", "b/c"]] == nil)

        // Changed on disk, then changed through `entries` directly (all encoded again).
        contents["k3"] = 33
        let noted = log.noteUnrecorded([["k3"]], in: contents, seenAt: Date(timeIntervalSince1970: 30))
        #expect(noted)
        try log.save(for: target, keepingEncoding: true)
        #expect(try SettingsProvenanceLog.load(for: target) == log)
        log.entries[["k4"]] = nil
        try log.save(for: target, keepingEncoding: true)
        #expect(try SettingsProvenanceLog.load(for: target) == log)

        // Many removals at once, then a log loaded with its encoding kept and changed again.
        for i in 10..<40 { contents["k\(i)"] = nil }
        log.prune(to: contents)
        try log.save(for: target, keepingEncoding: true)
        var loaded = try SettingsProvenanceLog.load(for: target, keepingEncoding: true)
        #expect(loaded == log)
        contents["k5"] = 55
        loaded.record([["k5"]], in: contents, by: tool)
        try loaded.save(for: target, keepingEncoding: true)
        #expect(try SettingsProvenanceLog.load(for: target) == loaded)
        #expect(try SettingsProvenanceLog.describe(key: ["k5"], inFileAt: target) == nil)  // no settings file written here
    }

    @Test func aLogReadAgainAfterAnotherWritersSaveIsTheLogOnDisk() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        var (contents, log) = try savedLog(of: 30, for: target)

        // Another process changes one entry, adds one and removes two.
        var other = try SettingsProvenanceLog.load(for: target)
        contents["k1"] = 100
        contents["k30"] = ["a/b": "new"]
        contents["k2"] = nil
        contents["k3"] = nil
        other.record([["k1"], ["k30"], ["k2"], ["k3"]], in: contents, by: theirs)
        try other.save(for: target)
        let again = try SettingsProvenanceLog.load(for: target, keepingEncoding: true, updating: log)
        #expect(again == other)
        #expect(again.entries[["k30", "a/b"]]?.device == "3F2A")
        #expect(again.entries[["k2"]] == nil)

        // A log with an entry that does not read back is read whole, as without the previous log.
        let meta = PlistFile.companionDirectory(for: target)
        let broken: PlistDictionary = ["version": 1, "keys": ["k5": ["origin": "nonsense"], "k6": ["origin": "write", "date": .date(Date(timeIntervalSince1970: 40))]]]
        try PlistFile.replace(meta + "/" + SettingsProvenanceLog.fileName, with: PlistValue.dictionary(broken).encodedBytes(as: .binary), permissions: 0o600)
        let read = try SettingsProvenanceLog.load(for: target, keepingEncoding: true, updating: again)
        #expect(try read == SettingsProvenanceLog.load(for: target))
        #expect(read.entries.keys.map { $0 } == [["k6"]])
    }

    @Test func aLogChangedSinceItWasSavedReadsAsTheOtherWritersFileWhenReadAgain() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        var (contents, log) = try savedLog(of: 30, for: target)

        // This writer changes entries it has not saved yet: one the other writer changes too,
        // one it alone changes, one it adds and one it removes.
        var later = contents
        later["k1"] = 11
        later["k4"] = 44
        later["mine"] = "only here"
        later["k5"] = nil
        log.record([["k1"], ["k4"], ["mine"], ["k5"]], in: later, by: theirs)
        log.prune(to: later)

        // Another process saves the log whole meanwhile (its own changes, not this writer's).
        var other = try SettingsProvenanceLog.load(for: target)
        contents["k1"] = 100
        contents["k2"] = nil
        other.record([["k1"], ["k2"]], in: contents, by: mine)
        try other.save(for: target)

        // Read again: the file, whatever this writer changed since it last saved or read it.
        let again = try SettingsProvenanceLog.load(for: target, keepingEncoding: true, updating: log)
        #expect(again == other)
        #expect(again.entries[["k4"]] == other.entries[["k4"]])
        #expect(again.entries[["k5"]] != nil)
        #expect(again.entries[["mine"]] == nil)
        #expect(again.entries[["k2"]] == nil)
        // And it goes on from there: a save of it reads back the same.
        var next = again
        contents["k7"] = 70
        next.record([["k7"]], in: contents, by: theirs)
        try next.save(for: target, keepingEncoding: true)
        #expect(try SettingsProvenanceLog.load(for: target) == next)
    }
}
