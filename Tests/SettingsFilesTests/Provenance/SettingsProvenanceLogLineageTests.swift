import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

// The provenance log's lineage: a writer whose log is of the lineage of the file another writer
// folded catches up on the generations instead of reading the file whole, and reads it whole
// whenever the file is anything else.

/// Changes many keys at once (more than a generation carries: the log is written whole).

/// The log file's root, as a dictionary, changed by `change` and written back (binary).
private func rewriteLog(_ path: String, _ change: (inout PlistDictionary) -> Void) throws {
    let url = URL(filePath: SettingsProvenanceLog.path(for: path))
    guard case .dictionary(var root) = try PlistValue(decoding: Data(contentsOf: url)) else {
        Issue.record("the log is not a dictionary")
        return
    }
    change(&root)
    try Data(PlistValue.dictionary(root).encodedBytes(as: .binary)).write(to: url)
}

struct SettingsProvenanceLogLineageTests {
    private let tool = SettingsProvenance.thisProcess(.tool)

    /// Two writers; the first folds the log (writes it whole) while the second waits, and keeps
    /// fewer generations meanwhile than history does. The folded file is then given an entry no
    /// generation carries, under the same lineage: the second writer, catching up on the
    /// generations, does not see it (it did not read the file); once the lineage is another, a
    /// writer reads the file and sees it.
    @Test func aWriterOfTheFilesLineageCatchesUpWithoutReadingIt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var a: PlistRecorder? = PlistRecorder(limits: .init())
        var b: PlistRecorder? = PlistRecorder(limits: .init())
        try set(path, ["k0"], 0, recorder: &b, by: tool)
        for i in 1...25 { try set(path, ["k\(1 + i % 4)"], .integer(PlistInteger(Int64(i))), recorder: &a, by: tool) }
        try set(path, ["k5"], 0, recorder: &b, by: tool)  // reads the file the first writer folded
        let lineage = try #require(a?.log?.lineage)
        #expect(b?.log?.lineage == lineage, "the second writer's log is of the file's lineage")
        // Fewer saves than history keeps: the generations after the second writer's are all kept.
        for i in 1...15 { try set(path, ["k\(1 + i % 4)"], .integer(PlistInteger(Int64(i))), recorder: &a, by: tool) }
        let folded = try SettingsProvenanceLog.load(for: path)
        #expect(folded.savedThrough > 27, "the first writer folded the log again")
        #expect(a?.log?.lineage == lineage, "as the same lineage")

        let planted = SettingsProvenance(origin: .sync, process: "planted", date: Date(), device: "P",
                                         digest: folded.entries[["k0"]]?.digest ?? 0)
        try rewriteLog(path) { root in
            guard case .dictionary(var keys)? = root["keys"] else { return }
            keys["k0"] = .dictionary(["origin": "sync", "process": "planted", "date": .date(planted.date), "device": "P",
                                      "digest": .integer(PlistInteger(Int64(bitPattern: planted.digest)))])
            root["keys"] = .dictionary(keys)
        }
        #expect(try SettingsProvenanceLog.load(for: path).entries[["k0"]]?.device == "P", "a reader of the file sees the planted entry")
        let caughtUp = b?.currentLog(for: path)
        #expect(caughtUp?.entries[["k0"]]?.device != "P", "the writer of the lineage did not read the file")
        #expect(caughtUp?.entries == a?.log?.entries, "and reads as the folding writer's log")

        try rewriteLog(path) { root in root["lineage"] = "another" }
        var c: PlistRecorder? = PlistRecorder(limits: .init())
        _ = c?.currentLog(for: path)
        try set(path, ["k1"], 99, recorder: &a, by: tool)
        try set(path, ["k2"], 99, recorder: &c, by: tool)
        for i in 0..<25 { try set(path, ["k3"], .integer(PlistInteger(Int64(i))), recorder: &a, by: tool) }
        try rewriteLog(path) { root in
            guard case .dictionary(var keys)? = root["keys"] else { return }
            keys["k0"] = .dictionary(["origin": "sync", "process": "planted", "date": .date(planted.date), "device": "Q",
                                      "digest": .integer(PlistInteger(Int64(bitPattern: planted.digest)))])
            root["keys"] = .dictionary(keys)
            root["lineage"] = "yet another"
        }
        #expect(c?.currentLog(for: path).entries[["k0"]]?.device == "Q", "a file of another lineage is read whole")
    }

    /// A log file written whole (as a new lineage: a change too large for a generation) with the
    /// identity of the one a writer last read, as an inode reused within one tick of the clock at
    /// the same size makes it: the generation's record says the log was written, and the writer
    /// reads the new file rather than catching up on the generations alone.
    @Test func aLogWrittenWithTheOldFilesIdentityIsStillReadAgain() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var a: PlistRecorder? = PlistRecorder(limits: .init())
        var b: PlistRecorder? = PlistRecorder(limits: .init())
        for i in 0..<25 { try set(path, ["k\(i % 5)"], .integer(PlistInteger(Int64(i))), recorder: &b, by: tool) }
        let seen = b?.logIdentity
        #expect(seen != nil, "the second writer wrote the log")
        try setMany(path, (0..<600).map { ["bulk\($0)"] }, 1, recorder: &a, by: tool)
        b?.logIdentity = try PlistFile.identity(of: SettingsProvenanceLog.path(for: path))  // as if reused
        let fresh = try SettingsProvenanceLog.load(for: path)
        #expect(fresh.entries.count == 605, "the bulk change's entries are in the file only")
        #expect(b?.currentLog(for: path).entries == fresh.entries, "the writer read the new file")
    }

    /// Writers saving one file in turn, at random, with changes a generation carries and changes
    /// it cannot (the log is then written whole, as a new lineage), one writer with a shorter
    /// history (generations go before others read them), and removals: after every save, the
    /// writer's log, and now and then another's, reads as a fresh reader's load of the file and
    /// the generations after it.
    @Test(arguments: 0..<12)
    func everyWritersLogReadsAsTheFileDoes(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &+ 77)
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorders: [PlistRecorder?] = [PlistRecorder(limits: .init()), PlistRecorder(limits: .init()),
                                           PlistRecorder(limits: .init(count: seed % 3 == 0 ? 4 : 20))]
        let writers = [tool, SettingsProvenance.thisProcess(.sync, device: "S"), SettingsProvenance.thisProcess(.migration)]
        var skipped = 0
        for step in 0..<160 {
            let w = Int.random(in: 0..<recorders.count, using: &rng)
            switch Int.random(in: 0..<40, using: &rng) {
            case 0:
                let keys = (0..<600).map { ["bulk\($0)"] }
                try setMany(path, keys, .integer(PlistInteger(Int64(step))), recorder: &recorders[w], by: writers[w])
            case 1...4:
                try set(path, ["k\(Int.random(in: 0..<8, using: &rng))"], nil, recorder: &recorders[w], by: writers[w])
            default:
                try set(path, ["k\(Int.random(in: 0..<8, using: &rng))"], .integer(PlistInteger(Int64(step))),
                        recorder: &recorders[w], by: writers[w])
            }
            let fresh = try SettingsProvenanceLog.load(for: path)
            // The writer, and now and then another (the others fall behind, at times by more
            // generations than the shorter history keeps).
            for r in recorders.indices where r == w || Int.random(in: 0..<10, using: &rng) == 0 {
                let before = recorders[r]?.log?.lineage
                let log = recorders[r]?.currentLog(for: path)
                if before != nil, before == recorders[r]?.log?.lineage { skipped += 1 }
                #expect(log?.entries == fresh.entries && log?.isComplete == fresh.isComplete,
                        "seed \(seed) step \(step): writer \(r) differs at \(Set(log?.entries.keys.map { $0 } ?? []).symmetricDifference(fresh.entries.keys))")
            }
        }
        #expect(skipped > 0, "seed \(seed): some writer caught up on a fold of its lineage")
    }
}
