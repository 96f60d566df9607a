import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `PlistHistory.keep(_:changed:by:for:limits:provenance:known:)`: a writer that keeps what it
/// knows of the history journal between saves keeps and prunes exactly the generations a writer
/// that reads the journal every time would, whatever other writers did in between.
struct PlistHistoryKnownTests {
    let writer = HistoryFixture.writer

    func bytes(_ i: Int) throws -> Data {
        try HistoryFixture.bytes(i)
    }

    @Test func anotherWritersGenerationIsNoticedAndCountedWhenPruning() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        let limits = PlistHistory.Limits(count: 3)
        var known = PlistHistory.Known()
        for i in 1...4 {
            #expect(try PlistHistory.keep(bytes(i), changed: [["i"]], by: writer, for: target, limits: limits, known: &known) == i)
        }
        // Another process (the tool, another store) keeps one between two of this writer's saves,
        // within the same tick of the file system's clock: the journal's times look unchanged.
        let journal = PlistHistory.journal(for: target)
        var before = stat()
        #expect(lstat(journal, &before) == 0)
        #expect(try PlistHistory.keep(bytes(5), changed: [["i"]], by: writer, for: target, limits: limits) == 5)
        let times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, journal, times, AT_SYMLINK_NOFOLLOW) == 0)
        #expect(try PlistHistory.keep(bytes(6), changed: [["i"]], by: writer, for: target, limits: limits, known: &known) == 6)
        #expect(try PlistHistory.list(for: target).map(\.number) == [4, 5, 6])
        #expect(try PlistHistory.newest(for: target)?.contents() == ["i": 6])
    }

    /// A writer that last saw the journal at some length finds it longer, with the same inode,
    /// but holding other records at that length: another writer wrote it again (with an inode an
    /// earlier rewrite freed) without its first generations. The writer reads it whole and keeps
    /// every generation; before, it took the bytes past its old length for a record a killed
    /// writer left unfinished, and cut the journal there.
    @Test(arguments: [false, true])
    func aJournalWrittenAgainWithTheSameInodeIsReadWholeNotCut(unevenRecords: Bool) throws {
        // Records of one length put a record boundary at the stale writer's length (it took the
        // record there for the next one, skipping those between); records of growing lengths put
        // the middle of a record there (it cut the journal).
        func bytes(_ i: Int) throws -> Data {
            try PlistValue.dictionary(["i": .integer(PlistInteger(Int64(i))),
                                       "pad": .string(String(repeating: "x", count: unevenRecords ? i * 37 : 8))]).encoded(as: .binary)
        }
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        let limits = PlistHistory.Limits(count: 20)
        var stale = PlistHistory.Known()
        for i in 1...5 {
            #expect(try PlistHistory.keep(bytes(i), changed: [["i"]], by: writer, for: target, limits: limits, known: &stale) == i)
        }
        var other = PlistHistory.Known()
        for i in 6...12 {
            #expect(try PlistHistory.keep(bytes(i), changed: [["i"]], by: writer, for: target, limits: limits, known: &other) == i)
        }
        // Generations 1 to 3 dropped, written in place (so the inode stays), as a rewrite does.
        let journal = PlistHistory.journal(for: target)
        let all = try Data(contentsOf: URL(filePath: journal))
        let fourth = try #require(other.records.first { $0.number == 4 })
        let fd = open(journal, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        let kept = all.dropFirst(fourth.offset)
        #expect(kept.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == kept.count)
        close(fd)
        #expect(kept.count > stale.end, "longer than the stale writer's journal")
        #expect(try PlistHistory.keep(bytes(13), changed: [["i"]], by: writer, for: target, limits: limits, known: &stale) == 13)
        #expect(try PlistHistory.list(for: target).map(\.number) == Array(4...13))
        #expect(stale.records.map(\.number) == Array(4...13), "the writer knows the journal as it is")
    }

    /// A writer read the journal while it held a generation that was then discarded (its save
    /// failed); the next generation took its number at its place, with the same length, and
    /// another followed. The writer reads the journal again rather than take the records past its
    /// old end for appended ones, which would keep the discarded generation's entries in place of
    /// the one that replaced it.
    @Test func aDiscardedGenerationReplacedAtTheSameLengthIsNotTakenForAnAppend() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        let limits = PlistHistory.Limits(count: 20)
        var reader = PlistHistory.Known()
        var saver = PlistHistory.Known()
        for i in 1...5 {
            try PlistHistory.keep(bytes(i), changed: [["i"]], by: writer, for: target, limits: limits, known: &saver)
        }
        let discarded: PlistDictionary = ["i": ["origin": "write", "process": "Discarded"]]
        let replacing: PlistDictionary = ["i": ["origin": "write", "process": "Replacing"]]
        #expect(try PlistHistory.keep(bytes(6), changed: [["i"]], by: writer, for: target, limits: limits,
                                      provenance: discarded, known: &saver) == 6)
        // Read without the lock (a writer catching up on provenance) while 6 is there.
        #expect(reader.provenanceDeltas(for: target, after: 5).map(\.entries) == [discarded])
        let seenEnd = reader.end
        PlistHistory.discard(6, for: target, known: &saver)
        #expect(try PlistHistory.keep(bytes(6), changed: [["i"]], by: writer, for: target, limits: limits,
                                      provenance: replacing, known: &saver) == 6)
        #expect(saver.end == seenEnd, "the same length, so the reader's end is a record boundary again")
        #expect(try PlistHistory.keep(bytes(7), changed: [["i"]], by: writer, for: target, limits: limits,
                                      provenance: replacing, known: &saver) == 7)
        #expect(reader.provenanceDeltas(for: target, after: 5).map(\.entries) == [replacing, replacing])
        #expect(reader.records.map(\.tag) == saver.records.map(\.tag))
    }

    /// A writer holds the journal it last read or wrote open, so the journals other writers
    /// write again (compacting it) never get its inode number: a journal found with the
    /// writer's device and inode is the writer's own.
    @Test func noRewrittenJournalGetsTheHeldJournalsInode() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        var holder = PlistHistory.Known()
        try PlistHistory.keep(bytes(1), changed: [["i"]], by: writer, for: target, limits: .init(count: 1), known: &holder)
        let held = try #require(holder.identity)
        #expect(holder.holdsJournal)
        var other = PlistHistory.Known()
        var inodes: [UInt64] = []  // the journal's, from its first rewrite on
        for i in 2...80 {
            try PlistHistory.keep(bytes(i), changed: [["i"]], by: writer, for: target, limits: .init(count: 1), known: &other)
            var s = stat()
            #expect(lstat(PlistHistory.journal(for: target), &s) == 0)
            if UInt64(s.st_ino) != held.inode || !inodes.isEmpty { inodes.append(UInt64(s.st_ino)) }
        }
        #expect(Set(inodes).count >= 2, "written again now and then")
        #expect(!inodes.contains(held.inode))
        try PlistHistory.keep(bytes(81), changed: [["i"]], by: writer, for: target, limits: .init(count: 1), known: &holder)
        #expect(try PlistHistory.list(for: target).map(\.number) == [81])
    }

    /// A journal whose identity a writer does not hold open is read whole, even when the file
    /// found has that identity (here another journal written in place, with the same length and
    /// time): without the hold, a replacement could have the inode number back.
    @Test func aJournalIdentityNotHeldIsReadWhole() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        var known = PlistHistory.Known()
        for i in 1...3 {
            try PlistHistory.keep(bytes(i), changed: [["i"]], by: writer, for: target, limits: .init(), known: &known)
        }
        try FileManager.default.createDirectory(atPath: dir.path("other"), withIntermediateDirectories: true)
        let elsewhere = dir.path("other/settings.plist")
        var otherKnown = PlistHistory.Known()
        for i in 7...9 {
            try PlistHistory.keep(bytes(i), changed: [["i"]], by: writer, for: elsewhere, limits: .init(), known: &otherKnown)
        }
        let journal = PlistHistory.journal(for: target)
        let replacement = try Data(contentsOf: URL(filePath: PlistHistory.journal(for: elsewhere)))
        let identity = try #require(known.identity)
        #expect(Int64(replacement.count) == identity.size)
        let fd = open(journal, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        #expect(replacement.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == replacement.count)
        close(fd)
        let time = timespec(tv_sec: Int(identity.modifiedSeconds), tv_nsec: Int(identity.modifiedNanoseconds))
        #expect(utimensat(AT_FDCWD, journal, [time, time], 0) == 0)
        #expect(try PlistFile.identity(of: journal) == identity)
        known.held = nil
        try PlistHistory.keep(bytes(4), changed: [["i"]], by: writer, for: target, limits: .init(), known: &known)
        #expect(known.records.dropLast().map(\.tag) == otherKnown.records.map(\.tag))
        #expect(known.records.last?.after == otherKnown.records.last?.tag)
    }

    /// A record of few changes is written without sharing (finding its few repeats costs more
    /// than it saves); one of many still writes its writer's entry once, not once per key.
    @Test func aRecordOfManyChangesWritesItsWritersEntryOnce() throws {
        let entry: PlistValue = ["origin": "write", "process": "MyApp", "pid": 1, "date": .date(Date(timeIntervalSince1970: 0))]
        func recordLength(entries count: Int) throws -> Int {
            let dir = try TemporaryDirectory()
            var provenance = PlistDictionary()
            for i in 0..<count { provenance["key\(1000 + i)"] = entry }
            var known = PlistHistory.Known()
            try PlistHistory.keep(bytes(1), changed: [], by: writer, for: dir.path("settings.plist"), limits: .init(),
                                  provenance: provenance, known: &known)
            let read = try #require(PlistHistory.provenanceDeltas(for: dir.path("settings.plist"), after: 0).first)
            #expect(read.entries == provenance)
            return try #require(known.records.last).length
        }
        let few = try recordLength(entries: PlistHistory.unsharedEntries)
        let many = try recordLength(entries: PlistHistory.unsharedEntries + 200)
        // Each more key costs its name (8 bytes), a reference and an offset: not a whole entry.
        #expect((many - few) / 200 < 20)
        #expect(try recordLength(entries: 1) < few)
    }

    @Test func aRemovedHistoryStartsAgainAtOne() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        var known = PlistHistory.Known()
        for i in 1...3 {
            try PlistHistory.keep(bytes(i), changed: [], by: writer, for: target, limits: .init(), known: &known)
        }
        try FileManager.default.removeItem(atPath: PlistHistory.journal(for: target))
        #expect(try PlistHistory.keep(bytes(9), changed: [], by: writer, for: target, limits: .init(), known: &known) == 1)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1])
    }

    @Test func theByteBudgetCountsTheSizesAlreadyKnown() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        let limits = PlistHistory.Limits(count: 20, bytes: 2_500)
        var known = PlistHistory.Known()
        for i in 1...6 {
            try PlistHistory.keep(Data(count: 1_000), changed: [["i\(i)"]], by: writer, for: target, limits: limits, known: &known)
        }
        // About 1 KB each: two fit in the budget, the newest always stays.
        #expect(try PlistHistory.list(for: target).map(\.number) == [5, 6])
    }

    @Test func aRecordAKilledWriterLeftUnfinishedIsCutOffByTheNextWriter() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        try PlistHistory.keep(bytes(1), changed: [], by: writer, for: target)
        try PlistHistory.keep(bytes(2), changed: [], by: writer, for: target)
        let journal = PlistHistory.journal(for: target)
        let whole = try Data(contentsOf: URL(filePath: journal))
        // Killed half-way through appending generation 3: its header and part of it.
        let handle = try FileHandle(forWritingTo: URL(filePath: journal))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("SGJ1".utf8) + Data([0x00, 0x10, 0x00, 0x00]) + Data(repeating: 0x62, count: 100))
        try handle.close()
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2])  // readers stop before it
        var known = PlistHistory.Known()
        #expect(try PlistHistory.keep(bytes(3), changed: [], by: writer, for: target, limits: .init(), known: &known) == 3)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2, 3])
        #expect(try Data(contentsOf: URL(filePath: journal)).prefix(whole.count) == whole)
        #expect(try PlistHistory.generation(3, for: target)?.contents() == ["i": 3])
    }
}
