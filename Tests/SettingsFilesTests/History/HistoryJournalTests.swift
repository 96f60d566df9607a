import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

/// History and provenance at the cost of one small file per change (issue 29, part 3): the
/// provenance log travels in the generations and is written whole only now and then.
/// One change through the transaction, as every writer makes it (by the tool unless `writer`).
private func change(_ path: String, _ key: String, _ value: PlistValue, recorder: inout PlistRecorder?,
                    by writer: SettingsProvenance? = nil) throws {
    _ = try SettingsFileTransaction.run(at: path, options: .init(), known: nil, recorder: &recorder) {
        (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
        var contents = current.contents ?? PlistDictionary()
        contents[key] = value
        return .init(contents: contents, changed: [[key]], writer: writer ?? SettingsProvenance.thisProcess(.tool))
    }
}

/// Appends `value` to the history journal beside `path` as a record, as a writer would (planted
/// records are outside input); `torn` cuts the record short, as a killed writer leaves it;
/// `pending` marks it pending (`SGJP`).
func plantRecord(_ value: PlistValue, besides path: String, torn: Bool = false, pending: Bool = false) throws {
    let payload = try value.encoded(as: .binary)
    let n = payload.count
    var record = Data((pending ? "SGJP" : "SGJ1").utf8) + Data([UInt8(n & 0xff), UInt8(n >> 8 & 0xff), UInt8(n >> 16 & 0xff), UInt8(n >> 24 & 0xff)]) + payload
    if torn { record = record.prefix(record.count - 3) }
    let journal = URL(filePath: PlistHistory.journal(for: path))
    let handle = try FileHandle(forWritingTo: journal)
    try handle.seekToEnd()
    try handle.write(contentsOf: record)
    try handle.close()
}

struct HistoryJournalTests {
    @Test func aChangeWritesOneGenerationAndTheLogOnlyOncePerHistoryLimit() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "k0", 0, recorder: &recorder)  // the first change of a new file: every leaf is new
        let log = SettingsProvenanceLog.path(for: path)
        let first = try PlistFile.identity(of: log)
        var rewrites = 0
        var previous = first
        for i in 1...40 {
            try change(path, "k\(i)", .integer(PlistInteger(Int64(i))), recorder: &recorder)
            let now = try PlistFile.identity(of: log)
            if now != previous { rewrites += 1 }
            previous = now
            // A reader that starts now knows who set every key, written whole or not.
            let read = try SettingsProvenanceLog.load(for: path)
            #expect(read.entries[["k\(i)"]]?.origin == .tool, "change \(i)")
            #expect(read.entries[["k0"]]?.origin == .tool)
        }
        #expect(rewrites == 2, "the log was written \(rewrites) times in 40 changes")  // every 20th
        #expect(try PlistHistory.list(for: path).count == 20)  // the default limit
    }

    @Test func writersTakingTurnsEachCarryOnlyTheirOwnEntries() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var a: PlistRecorder? = PlistRecorder(limits: .init())
        var b: PlistRecorder? = PlistRecorder(limits: .init())
        let sync = SettingsProvenance.thisProcess(.sync, device: "3F2A")
        // 50 changes: the journal compacted and the log written whole twice on the way.
        for i in 0..<25 {
            try change(path, "a\(i)", 1, recorder: &a)
            try change(path, "b\(i)", 2, recorder: &b, by: sync)
        }
        // Each generation carries the entry of the key its writer changed, not the other
        // writer's entries it caught up on (those are in the journal already).
        let deltas = PlistHistory.provenanceDeltas(for: path, after: 0)
        #expect(deltas.count == 20)
        for (number, entries) in deltas {
            #expect(entries.count == 1, "generation \(number) carries \(entries.keys.map { $0 })")
        }
        // And a reader still knows who set every key, as the last writer does.
        let read = try SettingsProvenanceLog.load(for: path)
        for i in 0..<25 {
            #expect(read.entries[["a\(i)"]]?.origin == .tool, "a\(i)")
            #expect(read.entries[["b\(i)"]]?.origin == .sync, "b\(i)")
        }
        #expect(b?.log?.entries == read.entries)
        try change(path, "a25", 1, recorder: &a)  // caught up from what it read before and the new records
        #expect(a?.log?.entries == (try SettingsProvenanceLog.load(for: path)).entries)
    }

    @Test func aLimitOfZeroWritesNothingBesideTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        for i in 0..<3 { try change(path, "k", .integer(PlistInteger(Int64(i))), recorder: &recorder) }
        var none: PlistRecorder? = PlistRecorder(limits: .init(count: 0, bytes: 0))
        try change(path, "k", 10, recorder: &none)
        let companion = PlistFile.companionDirectory(for: path)
        #expect(!FileManager.default.fileExists(atPath: SettingsProvenanceLog.path(for: path)))
        #expect(try PlistHistory.list(for: path).isEmpty)
        let before = try FileManager.default.contentsOfDirectory(atPath: companion).sorted()
        #expect(!FileManager.default.fileExists(atPath: PlistHistory.journal(for: path)))
        for i in 11..<20 { try change(path, "k", .integer(PlistInteger(Int64(i))), recorder: &none) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: companion).sorted() == before)
        #expect(!FileManager.default.fileExists(atPath: PlistHistory.journal(for: path)))
        #expect(try PlistValue(contentsOf: URL(filePath: path))["k"] == 19)
    }

    @Test func aWriterKeepsTheEntriesOfTheNewestRecordsOnlyAndReadsTheRestAgain() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "k", 1, recorder: &recorder)  // the journal and the log exist
        // Planted (outside input): many records, each with entries, the last keeping them all.
        let count = PlistHistory.Known.cachedEntries + 40
        for n in 2...(count + 1) {
            try plantRecord(["origin": "write", "date": .date(Date()), "contents": .data(Data()), "changed": [],
                             "number": .integer(PlistInteger(Int64(n))), "oldest": 1,
                             "provenance": ["k\(n)": ["origin": "sync", "date": .date(Date()), "digest": 1]]], besides: path)
        }
        var known = PlistHistory.Known()
        let deltas = known.provenanceDeltas(for: path, after: 0)
        #expect(deltas.count == count + 1)
        #expect(known.records.count == count + 1)
        #expect(known.records.filter { $0.entries != nil }.count == PlistHistory.Known.cachedEntries)
        // Asked again, the older ones are read from the journal: the same entries.
        let again = known.provenanceDeltas(for: path, after: 0)
        #expect(again.map(\.number) == deltas.map(\.number))
        #expect(again.map(\.entries) == deltas.map(\.entries))
    }

    @Test func removingTheHistoryFoldsItsProvenanceIntoTheLogFirst() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        for i in 0..<5 { try change(path, "k\(i)", 1, recorder: &recorder) }
        PlistHistory.removeAll(for: path)  // `settings history --purge`
        #expect(try PlistHistory.list(for: path).isEmpty)
        let folded = try SettingsProvenanceLog.load(for: path)
        #expect((0..<5).allSatisfy { folded.entries[["k\($0)"]]?.origin == .tool })
        // Numbers start again at 1, and what the new generations carry is read back.
        var next: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "late", 1, recorder: &next, by: SettingsProvenance.thisProcess(.restore))
        #expect(try PlistHistory.list(for: path).map(\.number) == [1])
        let read = try SettingsProvenanceLog.load(for: path)
        #expect(read.entries[["late"]]?.origin == .restore)
        #expect(read.entries[["k4"]]?.origin == .tool)
    }

    @Test func generationsPrunedBeforeTheLogIsWrittenNeverLoseTheirProvenance() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        // A byte budget so small that every change prunes the one before it.
        var recorder: PlistRecorder? = PlistRecorder(limits: .init(count: 20, bytes: 1))
        for i in 0..<6 { try change(path, "k\(i)", 1, recorder: &recorder) }
        #expect(try PlistHistory.list(for: path).count == 1)
        let read = try SettingsProvenanceLog.load(for: path)
        #expect((0..<6).allSatisfy { read.entries[["k\($0)"]]?.origin == .tool }, "\(read.entries.keys)")
    }

    @Test func provenanceAGenerationCarriesIsOutsideInput() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "a", 1, recorder: &recorder)
        // Planted records: entries that are not entries, a path deeper than any file holds, a
        // removal of a key, garbage in place of the dictionary, a record cut short.
        let deep = Array(repeating: "x", count: PlistNesting.maximumDepth + 5).joined(separator: "/")
        let generation: PlistDictionary = ["origin": "write", "date": .date(Date()), "contents": .data(Data()), "changed": []]
        var first = generation
        first["number"] = 10
        first["provenance"] = ["a": "not an entry", deep: ["origin": "write", "date": .date(Date())], "b": ["origin": 7]]
        var second = generation
        second["number"] = 11
        second["provenance"] = "garbage"
        var third = generation
        third["number"] = 12
        third["provenance"] = ["a": ["origin": "sync", "date": .date(Date())]]
        try plantRecord(.dictionary(first), besides: path)
        try plantRecord(.dictionary(second), besides: path)
        try plantRecord(.dictionary(third), besides: path, torn: true)
        let read = try SettingsProvenanceLog.load(for: path)
        #expect(read.entries[["a"]]?.origin == .tool)
        #expect(read.entries.count == 1)
        // The next change still works and is read back.
        try change(path, "c", 1, recorder: &recorder)
        #expect(try SettingsProvenanceLog.load(for: path).entries[["c"]]?.origin == .tool)
    }
}

/// Attacks on the journal (issue 29's review): histories removed behind the log's back, planted
/// journals that are not files, and numbers far ahead.
struct HistoryJournalAttackTests {

    /// The history journal removed by hand (or by a purge whose fold could not write the
    /// log): numbers start again at 1 below the log's "through" mark, and the log must be written
    /// at the next change, or readers skip the new generations' provenance.
    @Test func numbersStartingAgainBelowTheLogsMarkAreStillRead() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        for i in 0..<21 { try change(path, "k\(i)", 1, recorder: &recorder) }  // the log written whole after the 20th
        try FileManager.default.removeItem(atPath: PlistHistory.journal(for: path))
        // The running writer, and a writer that starts now.
        try change(path, "late", 1, recorder: &recorder, by: SettingsProvenance.thisProcess(.restore))
        var fresh: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "later", 1, recorder: &fresh, by: SettingsProvenance.thisProcess(.migration))
        let read = try SettingsProvenanceLog.load(for: path)
        #expect(read.entries[["late"]]?.origin == .restore)
        #expect(read.entries[["later"]]?.origin == .migration)
        #expect(read.entries[["k3"]]?.origin == .tool)
    }

    /// Same-user plants in place of the journal: a directory, a FIFO and a dangling link. Saves
    /// go on, readers report the journal instead of reading it (or waiting on the FIFO), and
    /// provenance is still read back from the log.
    @Test(arguments: ["directory", "fifo", "link"])
    func aJournalThatIsNotAFileNeitherStopsSavesNorHangs(_ plant: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init(count: 3))
        try change(path, "a", 0, recorder: &recorder)
        let journal = PlistHistory.journal(for: path)
        try FileManager.default.removeItem(atPath: journal)
        switch plant {
        case "directory": try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: false)
        case "fifo": #expect(mkfifo(journal, 0o600) == 0)
        default: #expect(symlink("/nonexistent", journal) == 0)
        }
        // Readers first: a listing and a replay that open the FIFO must not wait for a writer.
        #expect(throws: PlistFile.Failure.self) { try PlistHistory.list(for: path) }
        #expect(throws: PlistFile.Failure.self) { try PlistHistory.summaries(for: path) }
        var fresh: PlistRecorder? = PlistRecorder(limits: .init(count: 3))
        for i in 1...6 {
            if i % 2 == 0 {
                try change(path, "a", .integer(PlistInteger(Int64(i))), recorder: &recorder)
            } else {
                try change(path, "a", .integer(PlistInteger(Int64(i))), recorder: &fresh, by: SettingsProvenance.thisProcess(.restore))
            }
        }
        #expect(try PlistValue(contentsOf: URL(filePath: path))["a"] == 6)
        #expect(try SettingsProvenanceLog.load(for: path).entries[["a"]]?.origin == .tool)
        // Nothing was written through the link.
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent"))
    }

    /// A plant numbered at the largest number: history cannot go on, but the program's saves do,
    /// and provenance is still read back (from the log written whole instead).
    @Test func aGenerationNumberedAtTheLimitStopsOnlyHistory() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "a", 0, recorder: &recorder)
        try plantRecord(["origin": "write", "date": .date(Date()), "contents": .data(Data()), "changed": [],
                         "number": .integer(PlistInteger(Int64(PlistHistory.maximumNumber))),
                         "provenance": ["a": ["origin": "sync", "date": .date(Date())]]], besides: path)
        for i in 1...3 { try change(path, "a", .integer(PlistInteger(Int64(i))), recorder: &recorder) }
        #expect(try PlistValue(contentsOf: URL(filePath: path))["a"] == 3)
        #expect(try SettingsProvenanceLog.load(for: path).entries[["a"]]?.origin == .tool)
    }

    /// A writer killed after its generation was created and before the file was replaced (the
    /// window holds the settings file's flush): the generation's entries replaced the entries of
    /// the values still in the file, so a key another writer set was explained as "changed on
    /// disk" (found by the attack on issue 29), and the next writer recorded it so for good. The
    /// replaced entries now still explain the values left, and the next writer puts them back.
    @Test func aKilledSavesEntriesDoNotHideWhoSetTheValuesLeft() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "a", 1, recorder: &recorder)
        // What a killed writer leaves: its generation (a = 2, with its entry), not the file.
        var delta = SettingsProvenanceLog()
        let killed = SettingsProvenance.thisProcess(.write)
        delta.record([["a"]], in: ["a": 2], by: killed)
        var known = PlistHistory.Known()
        _ = try PlistHistory.keep(try PlistValue.dictionary(["a": 2]).encoded(as: .binary), changed: [["a"]], by: killed,
                                  for: path, limits: .init(), provenance: delta.takeDelta(), known: &known)
        let line = try SettingsProvenanceLog.describe(key: ["a"], inFileAt: path)
        #expect(line?.hasPrefix("set with the settings tool") == true, "\(line ?? "nil")")
        // The next writer (another process) changes another key: no "changed on disk" for `a`.
        var next: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "b", 1, recorder: &next, by: SettingsProvenance.thisProcess(.write))
        #expect(try PlistHistory.list(for: path).last.map { $0.writer.origin } == .write)
        #expect(!(try PlistHistory.list(for: path)).contains { $0.writer.origin == .changedOnDisk })
        let after = try SettingsProvenanceLog.describe(key: ["a"], inFileAt: path)
        #expect(after?.hasPrefix("set with the settings tool") == true, "\(after ?? "nil")")
    }

    /// A writer that keeps the file it wrote (a store) prunes the log only along each change;
    /// an entry whose leaf another writer removed still goes at its next change.
    @Test func pruningAlongTheChangeStillDropsEntriesOfLeavesRemovedElsewhere() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        var known: SettingsFileTransaction.Known?
        func save(_ edit: @escaping (inout PlistDictionary) -> [[String]]) throws {
            let outcome = try SettingsFileTransaction.run(at: path, options: .init(), known: known, recorder: &recorder) {
                (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
                var contents = current.contents ?? PlistDictionary()
                let changed = edit(&contents)
                return .init(contents: contents, changed: changed, writer: SettingsProvenance.thisProcess(.write))
            }
            if case .written(let written) = outcome { known = written.known }
        }
        try save { $0["a"] = 1; $0["b"] = ["x": 1, "y": 2]; $0["c"] = 3; return [["a"], ["b"], ["c"]] }
        try save { $0["a"] = 2; return [["a"]] }  // along ["a"] only
        // The writer's own removals and reshapes go along the change.
        try save { $0["b"] = ["x": 1]; $0["c"] = nil; return [["b"], ["c"]] }
        var log = try SettingsProvenanceLog.load(for: path)
        #expect(log.entries[["b", "y"]] == nil)
        #expect(log.entries[["c"]] == nil)
        #expect(log.entries[["b", "x"]]?.origin == .write)
        #expect(log.entries[["a"]]?.origin == .write)
        // Another writer removes a leaf: the next change re-reads the file and prunes it all.
        var other: PlistRecorder? = PlistRecorder(limits: .init())
        _ = try SettingsFileTransaction.run(at: path, options: .init(), known: nil, recorder: &other) {
            (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
            var contents = current.contents ?? PlistDictionary()
            contents["b"] = nil
            return .init(contents: contents, changed: [["b"]], writer: SettingsProvenance.thisProcess(.tool))
        }
        try save { $0["a"] = 3; return [["a"]] }
        log = try SettingsProvenanceLog.load(for: path)
        #expect(log.entries[["b", "x"]] == nil)
        #expect(log.entries[["a"]]?.origin == .write)
        // A hand edit (no log written) that removes a leaf: the file is re-read, pruned whole.
        try save { $0["d"] = 4; return [["d"]] }
        var hand = try PlistValue(contentsOf: URL(filePath: path))
        if case .dictionary(var contents) = hand { contents["d"] = nil; hand = .dictionary(contents) }
        try hand.write(to: URL(filePath: path))
        try save { $0["a"] = 5; return [["a"]] }
        log = try SettingsProvenanceLog.load(for: path)
        #expect(log.entries[["d"]] == nil)
        #expect(log.entries[["a"]]?.origin == .write)
    }

    /// Two writers saving one file in turn: each catches up on the other's generations instead
    /// of reading the whole log, and knows what a whole read would (who set every key).
    @Test func aWriterCatchingUpOnAnothersGenerationsKnowsWhatAWholeReadWould() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var first: PlistRecorder? = PlistRecorder(limits: .init())
        var second: PlistRecorder? = PlistRecorder(limits: .init())
        try change(path, "shared", 0, recorder: &first, by: SettingsProvenance.thisProcess(.write))
        for i in 1...40 {
            let writer = SettingsProvenance.thisProcess(i.isMultiple(of: 2) ? .write : .sync)
            if i.isMultiple(of: 2) {
                try change(path, "a\(i)", .integer(PlistInteger(Int64(i))), recorder: &first, by: writer)
            } else {
                try change(path, "b\(i)", .integer(PlistInteger(Int64(i))), recorder: &second, by: writer)
            }
            if i.isMultiple(of: 2) {
                try change(path, "shared", .integer(PlistInteger(Int64(i))), recorder: &second, by: writer)
            } else {
                try change(path, "shared", .integer(PlistInteger(Int64(i))), recorder: &first, by: writer)
            }
            let whole = try SettingsProvenanceLog.load(for: path)
            for recorder in [first, second] {
                var recorder = try #require(recorder)
                let caughtUp = recorder.currentLog(for: path)
                #expect(caughtUp.entries == whole.entries, "after change \(i)")
            }
        }
        let whole = try SettingsProvenanceLog.load(for: path)
        #expect(whole.entries[["a40"]]?.origin == .write)
        #expect(whole.entries[["b39"]]?.origin == .sync)
        #expect(whole.entries[["shared"]]?.origin == .write)
    }
}

/// The history journal is outside input too (issue 29, part 3): a journal with another name (a
/// hard link), another user's, one whose records claim more than they hold, or one larger than
/// any writer writes, never makes a writer write elsewhere, crash or stop saving.
struct HistoryJournalFileAttackTests {
    private func keepOne(_ target: String, _ i: Int) throws -> Int? {
        try PlistHistory.keep(try PlistValue.dictionary(["i": .integer(PlistInteger(Int64(i)))]).encoded(as: .binary),
                              changed: [["i"]], by: SettingsProvenance.thisProcess(.write), for: target)
    }

    @Test func aJournalWithAnotherNameIsNeverWrittenThrough() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        #expect(try keepOne(target, 1) == 1)
        let elsewhere = dir.path("elsewhere")
        #expect(link(PlistHistory.journal(for: target), elsewhere) == 0)
        let before = try Data(contentsOf: URL(filePath: elsewhere))
        #expect(throws: PlistFile.Failure.self) { try keepOne(target, 2) }
        #expect(try Data(contentsOf: URL(filePath: elsewhere)) == before)
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the journal to another user"))
    func anotherUsersJournalIsNeverWritten() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        #expect(try keepOne(target, 1) == 1)
        let journal = PlistHistory.journal(for: target)
        #expect(chown(journal, 65534, 65534) == 0)
        let before = try Data(contentsOf: URL(filePath: journal))
        #expect(throws: PlistFile.Failure.self) { try keepOne(target, 2) }
        #expect(try Data(contentsOf: URL(filePath: journal)) == before)
    }

    @Test func aRecordClaimingMoreThanTheJournalHoldsEndsItAndIsCutOff() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        #expect(try keepOne(target, 1) == 1)
        let journal = URL(filePath: PlistHistory.journal(for: target))
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("SGJ1".utf8) + Data([0xff, 0xff, 0xff, 0x7f]) + Data(repeating: 0, count: 64))
        try handle.close()
        #expect(try PlistHistory.list(for: target).map(\.number) == [1])
        #expect(try keepOne(target, 2) == 2)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2])
    }

    @Test func aJournalLargerThanAnyWriterWritesIsRefusedByReadersAndStartedAgainByWriters() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        #expect(try keepOne(target, 1) == 1)
        let journal = PlistHistory.journal(for: target)
        #expect(truncate(journal, off_t(HistoryJournal.maximumSize + 1)) == 0)  // sparse: no disk used
        #expect(throws: PlistFile.Failure.self) { try PlistHistory.list(for: target) }
        #expect(try keepOne(target, 2) == 1)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1])
        #expect(try PlistFile.identity(of: journal).map { $0.size < 4096 } == true)
    }

    @Test func writersTakingTurnsKeepOneHistoryInOrder() throws {
        // Several writers (each its own recorder, as processes are) save one file in turn: every
        // save is one generation, numbered in order, its bytes read back, the limit honoured.
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        var known = [PlistHistory.Known(), PlistHistory.Known(), PlistHistory.Known()]
        let limits = PlistHistory.Limits(count: 7)
        for i in 1...40 {
            let w = i % 3
            let bytes = try PlistValue.dictionary(["i": .integer(PlistInteger(Int64(i)))]).encoded(as: .binary)
            #expect(try PlistHistory.keep(bytes, changed: [["i"]], by: SettingsProvenance.thisProcess(.write), for: target,
                                          limits: limits, known: &known[w]) == i)
        }
        let kept = try PlistHistory.list(for: target)
        #expect(kept.map(\.number) == Array(34...40))
        #expect(try kept.map { try $0.contents()["i"] } == (34...40).map { .integer(PlistInteger(Int64($0))) })
    }
}
