import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A save's generation is kept pending before its replace and confirmed after it
/// (`PlistHistory.keep(…pending:…)`, `PlistHistory.confirm(for:known:)`): a writer killed between
/// the two leaves no generation of a save that never happened, which `settings restore` would
/// then write.
struct PendingGenerationsTests {
    /// The last byte of the magic of the journal's last record (`1` confirmed, `P` pending).
    func lastMark(_ target: String) throws -> UInt8? {
        let journal = try Data(contentsOf: URL(filePath: PlistHistory.journal(for: target)))
        let records = Array(journal).withUnsafeBytes { HistoryJournal.scan($0).records }
        return records.last.map { journal[$0.offset + 3] }
    }

    @Test func aPendingGenerationIsNotListedUntilConfirmed() throws {
        let history = try HistoryFixture()
        let target = history.target
        var known = PlistHistory.Known()
        try history.keep(1, known: &known)
        #expect(try history.keep(2, pending: true, known: &known) == 2)
        #expect(try lastMark(target) == UInt8(ascii: "P"))
        #expect(try PlistHistory.list(for: target).map(\.number) == [1])
        #expect(try PlistHistory.summaries(for: target).map(\.number) == [1])
        #expect(try PlistHistory.newest(for: target)?.number == 1)
        #expect(try PlistHistory.generation(2, for: target) == nil)
        try PlistHistory.confirm(for: target, known: &known)
        #expect(try lastMark(target) == UInt8(ascii: "1"))
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2])
        #expect(try PlistHistory.newest(for: target)?.contents() == ["i": 2])
        #expect(known.records.last?.pending == false)
    }

    /// What a writer killed after keeping its generation and before its replace leaves: the
    /// next writer cuts the pending record off and numbers its own above it, so a reader that
    /// saw the pending one never takes the next for it.
    @Test func theNextWriterCutsAnUnconfirmedGenerationAndNumbersAboveIt() throws {
        let history = try HistoryFixture()
        let target = history.target
        var killed = PlistHistory.Known()
        for i in 1...3 { try history.keep(i, known: &killed) }
        let never: PlistDictionary = ["i": ["origin": "write", "process": "Killed"]]
        try history.keep(4, provenance: never, pending: true, known: &killed)
        // A reader without the lock sees it, pending, while its writer might still confirm it.
        var reader = PlistHistory.Known()
        #expect(reader.provenanceDeltas(for: target, after: 3).map(\.number) == [4])
        #expect(reader.records.last?.pending == true)
        // The writer is killed (never confirms); the next writer, under the lock, cuts it.
        var next = PlistHistory.Known()
        let size = try #require(try PlistFile.identity(of: PlistHistory.journal(for: target))?.size)
        // Of the killed one's length: the journal is then as long as the reader last saw it.
        let made: PlistDictionary = ["i": ["origin": "write", "process": "Made!!"]]
        #expect(try history.keep(5, provenance: made, pending: true, known: &next) == 5)
        try PlistHistory.confirm(for: target, known: &next)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2, 3, 5])
        #expect(try PlistHistory.generation(4, for: target) == nil)
        #expect(try PlistFile.identity(of: PlistHistory.journal(for: target))?.size == size,
                "the record of 4 was cut, and 5 took its place")
        // The reader takes the new record for what it is, not for an append after 4.
        #expect(reader.provenanceDeltas(for: target, after: 3).map(\.entries) == [made])
        #expect(reader.records.map(\.number) == [1, 2, 3, 5])
        #expect(reader.records.map(\.tag) == next.records.map(\.tag))
    }

    /// A reader that saw a record pending learns that it was confirmed (in place, at the same
    /// length), and a writer that saw it pending keeps it, not cuts it.
    @Test(arguments: [false, true])
    func aRecordSeenPendingAndConfirmedSinceIsKept(byAWriter: Bool) throws {
        let history = try HistoryFixture()
        let target = history.target
        var saver = PlistHistory.Known()
        try history.keep(1, known: &saver)
        let entries: PlistDictionary = ["i": ["origin": "write", "process": "Saver"]]
        try history.keep(2, provenance: entries, pending: true, known: &saver)
        var other = PlistHistory.Known()
        #expect(other.provenanceDeltas(for: target, after: 0).map(\.number) == [2])
        #expect(other.records.last?.pending == true)
        try PlistHistory.confirm(for: target, known: &saver)
        if byAWriter {
            #expect(try history.keep(3, known: &other) == 3)
            #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2, 3])
        } else {
            #expect(other.provenanceDeltas(for: target, after: 0).map(\.entries) == [entries])
            #expect(other.records.last?.pending == false)
        }
    }

    /// A writer that saw a record pending (loaded while its writer was between append and
    /// confirmation), after that writer was killed and another cut the record and kept its own
    /// in its place at its length, within one tick of a coarse clock (1 s: the journal's
    /// identity is then as it was): the writer keeps the other's generation, not cuts it.
    /// Found by an attack with second-granularity timestamps (15 of 15 runs).
    @Test func aRecordCutAndReplacedAtItsLengthWithinOneTickIsNotCutAgain() throws {
        let history = try HistoryFixture()
        let target = history.target
        var killed = PlistHistory.Known()
        try history.keep(1, known: &killed)
        try history.keep(2, provenance: ["i": ["origin": "write", "process": "Killed"]], pending: true, known: &killed)
        var loaded = PlistHistory.Known()
        _ = loaded.provenanceDeltas(for: target, after: 0)
        #expect(loaded.records.last?.pending == true)
        let journal = PlistHistory.journal(for: target)
        var seen = stat()
        #expect(lstat(journal, &seen) == 0)
        var other = PlistHistory.Known()
        #expect(try history.keep(3, provenance: ["i": ["origin": "write", "process": "Other!"]], pending: true, known: &other) == 3)
        try PlistHistory.confirm(for: target, known: &other)
        // The same inode and length; the clock's tick makes the time the same too.
        #expect(utimensat(AT_FDCWD, journal, [seen.st_atim, seen.st_mtim], AT_SYMLINK_NOFOLLOW) == 0)
        #expect(try PlistFile.identity(of: journal) == PlistFile.Identity(seen))
        #expect(try history.keep(4, known: &loaded) == 4)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 3, 4])
        #expect(try PlistHistory.generation(3, for: target)?.contents() == ["i": 3])
    }

    /// A pending record before another one is no record (only the last may be pending): a
    /// reader stops there, and the next writer cuts the journal there.
    @Test func aPendingRecordBeforeAnotherEndsTheJournal() throws {
        let history = try HistoryFixture()
        let target = history.target
        var first = PlistHistory.Known()
        try history.keep(1, known: &first)
        try history.keep(2, pending: true, known: &first)
        // Planted after it: a record appended without cutting the pending one.
        let payload: PlistValue = ["origin": "write", "date": .date(Date()), "changed": ["i"], "contents": .data(try HistoryFixture.bytes(3)), "number": 3]
        try plantRecord(payload, besides: target)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1])
        var next = PlistHistory.Known()
        #expect(try history.keep(4, known: &next) == 2)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2])
        #expect(try PlistHistory.newest(for: target)?.contents() == ["i": 4])
    }

    /// Planted pending records (outside input): one without a name is no record, and one
    /// numbered near the largest number is cut without using the numbers up.
    @Test(arguments: [(nil, 3), (Int64(HistoryJournal.tagValue(HistoryJournal.newTag()).intValue ?? 0), 3),
                      (Int64(HistoryJournal.tagValue(HistoryJournal.newTag()).intValue ?? 0), Int(PlistHistory.maximumNumber) - 2)])
    func aPlantedPendingRecordIsCutAndHistoryGoesOn(tag: Int64?, number: Int) throws {
        let history = try HistoryFixture()
        let target = history.target
        var known = PlistHistory.Known()
        for i in 1...2 { try history.keep(i, known: &known) }
        var planted: PlistDictionary = ["origin": "write", "date": .date(Date()), "changed": ["i"], "contents": .data(try HistoryFixture.bytes(99)),
                                        "number": .integer(PlistInteger(Int64(number)))]
        if let tag { planted["tag"] = .integer(PlistInteger(tag)) }
        try plantRecord(.dictionary(planted), besides: target, pending: true)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2])
        for i in 3...5 {
            var next = PlistHistory.Known()
            #expect(try history.keep(i, known: &next) != nil)
        }
        let numbers = try PlistHistory.list(for: target).map(\.number)
        #expect(numbers.count == 5 && numbers.prefix(2) == [1, 2] && numbers.allSatisfy { $0 < 100 }, "\(numbers)")
        #expect(try PlistHistory.newest(for: target)?.contents() == ["i": 5])
    }

    /// Every change through the transaction leaves its generation confirmed.
    @Test func aTransactionConfirmsItsGeneration() throws {
        let history = try HistoryFixture()
        let target = history.target
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        for i in 1...3 {
            let outcome = try SettingsFileTransaction.run(at: target, options: .init(), known: nil, recorder: &recorder) {
                (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
                var contents = current.contents ?? PlistDictionary()
                contents["i"] = .integer(PlistInteger(Int64(i)))
                return .init(contents: contents, changed: [["i"]], writer: HistoryFixture.writer)
            }
            guard case .written(let written) = outcome else {
                Issue.record("change \(i) was not written")
                return
            }
            #expect(written.generation == i)
            #expect(written.historyProblem == nil)
            #expect(try lastMark(target) == UInt8(ascii: "1"))
        }
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2, 3])
    }
}
