import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

// Attacks on the provenance log's lineage (2026-11-29, a helper's attack of the change): journals
// cut and changes discarded before a fold that keeps the lineage, hand-made and mutated log files
// at the look-up of the lineage, and writers of mixed history limits, hand edits and one-shot
// writers in turn. Each ends with every writer's log reading as a fresh reader's load.

/// A save whose record step ran but whose file replace then failed: the transaction's own
/// sequence (record, then discard) for a change that did not happen.
private func failedSet(_ path: String, _ key: [String], _ value: PlistValue?, recorder: inout PlistRecorder?,
                       by writer: SettingsProvenance) throws {
    let before: PlistDictionary
    if case .dictionary(let d) = try PlistValue(decoding: Data(contentsOf: URL(filePath: path))) { before = d } else { before = [:] }
    var contents = before
    _ = contents.setValue(value, at: key[...])
    let bytes = try PlistValue.dictionary(contents).encodedBytes(as: .binary)
    let edit = SettingsFileTransaction.Edit(contents: contents, changed: [key], writer: writer)
    let r = try recorder!.record(Data(bytes), format: .binary, edit: edit, before: before, previous: nil, target: path)
    if let n = r.generation { recorder!.discard(n, for: path) }
}

private func journalRecords(_ path: String) -> [HistoryJournal.Record] {
    var k = PlistHistory.Known()
    _ = k.provenanceDeltas(for: path, after: 0)
    return k.records
}

/// Cuts the journal just before the record numbered `number`.
private func cutJournal(_ path: String, before number: Int) throws {
    let rec = try #require(journalRecords(path).first { $0.number == number })
    let fd = open(PlistHistory.journal(for: path), O_WRONLY)
    #expect(fd >= 0)
    #expect(ftruncate(fd, off_t(rec.offset)) == 0)
    close(fd)
}

private func diff(_ a: SettingsProvenanceLog?, _ b: SettingsProvenanceLog) -> String {
    let ak = a?.entries ?? [:]
    var out: [String] = []
    for (k, v) in ak where b.entries[k] != v { out.append("\(k): rec=\(v.origin)/\(v.digest) fresh=\(b.entries[k].map { "\($0.origin)/\($0.digest)" } ?? "nil")") }
    for (k, v) in b.entries where ak[k] == nil { out.append("\(k): rec=nil fresh=\(v.origin)/\(v.digest)") }
    return out.sorted().joined(separator: "; ") + " complete rec=\(String(describing: a?.isComplete)) fresh=\(b.isComplete)"
}

/// Builds a bplist00 from raw objects (each its encoded bytes), refs of `refSize` bytes.
private func bplist(_ objects: [[UInt8]], top: Int = 0, refSize: Int = 1, offsetSize: Int = 2,
                    numObjects: UInt64? = nil, tableOffset: UInt64? = nil) -> [UInt8] {
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    for o in objects { offsets.append(out.count); out += o }
    let table = out.count
    for off in offsets { for i in (0..<offsetSize).reversed() { out.append(UInt8((off >> (8 * i)) & 0xFF)) } }
    out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
    func be64(_ v: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8((v >> (8 * UInt64($0))) & 0xFF) } }
    out += be64(numObjects ?? UInt64(objects.count)) + be64(UInt64(top)) + be64(tableOffset ?? UInt64(table))
    return out
}
private func ascii(_ s: String) -> [UInt8] { precondition(s.utf8.count < 15); return [0x50 | UInt8(s.utf8.count)] + Array(s.utf8) }
private func int1(_ v: UInt8) -> [UInt8] { [0x10, v] }
private func dict(_ keys: [Int], _ values: [Int]) -> [UInt8] { [0xD0 | UInt8(keys.count)] + keys.map(UInt8.init) + values.map(UInt8.init) }

struct SettingsProvenanceLogLineageAttackTests {
    private let tool = SettingsProvenance.thisProcess(.tool)
    private let sync = SettingsProvenance.thisProcess(.sync, device: "S")

    /// Sets up a (folder) and b (of the same lineage, behind): returns them.
    private func twoWritersOfOneLineage(_ path: String) throws -> (PlistRecorder?, PlistRecorder?) {
        var a: PlistRecorder? = PlistRecorder(limits: .init())
        var b: PlistRecorder? = PlistRecorder(limits: .init())
        try set(path, ["k0"], 0, recorder: &b, by: sync)
        for i in 1...25 { try set(path, ["k\(1 + i % 4)"], .integer(PlistInteger(Int64(i))), recorder: &a, by: tool) }
        try set(path, ["k5"], 0, recorder: &b, by: sync)
        #expect(b?.log?.lineage != nil && b?.log?.lineage == a?.log?.lineage)
        return (a, b)
    }

    /// `a` saves until it folds the log keeping its lineage; then both writers' logs read as a
    /// fresh reader's load.
    private func foldKeepingTheLineage(_ path: String, a: inout PlistRecorder?, b: inout PlistRecorder?) throws {
        var folded = false
        for i in 0..<30 where !folded {
            let lineage = a?.log?.lineage
            let saved = a?.log?.savedThrough
            try set(path, ["d\(i)"], 1, recorder: &a, by: tool)
            folded = a?.log?.savedThrough != saved && a?.log?.lineage == lineage
        }
        #expect(folded, "a folded keeping the lineage")
        let fresh = try SettingsProvenanceLog.load(for: path)
        let aLog = a?.currentLog(for: path)
        let bLog = b?.currentLog(for: path)
        #expect(aLog?.entries == fresh.entries, "a: \(diff(aLog, fresh))")
        #expect(bLog?.entries == fresh.entries, "b: \(diff(bLog, fresh))")
    }

    /// The journal cut short behind the writers' backs above the log's mark: the folding
    /// writer keeps (and later folds, keeping the lineage) entries that no generation carries.
    @Test func journalCutAboveTheMarkThenARoutineFold() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var (a, b) = try twoWritersOfOneLineage(path)
        for i in 0..<10 { try set(path, ["c\(i)"], 1, recorder: &a, by: tool) }
        let through = try #require(a?.log?.through)
        try cutJournal(path, before: through - 4)  // the last 5 generations go
        try foldKeepingTheLineage(path, a: &a, b: &b)
    }

    /// A change of an existing key recorded, then its generation discarded (the file could not be
    /// replaced), then a routine fold by the same writer.
    @Test func discardedChangeThenARoutineFold() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var (a, b) = try twoWritersOfOneLineage(path)
        try failedSet(path, ["k1"], "never", recorder: &a, by: tool)
        let fresh0 = try SettingsProvenanceLog.load(for: path)
        let aLog0 = a?.currentLog(for: path)
        #expect(aLog0?.entries == fresh0.entries, "after the discard, a reads as the file: \(diff(aLog0, fresh0))")
        try foldKeepingTheLineage(path, a: &a, b: &b)
    }

    /// Hand-made binary plists at fileMarks and at a decode with onlyTopLevelKeys: nothing
    /// crashes; where a full decode succeeds, the marks equal its keys.
    @Test func hostileMarks() throws {
        var cases: [(String, [UInt8])] = []
        // 0 dict {lineage: "X", through: 5}
        cases.append(("plain", bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)])))
        cases.append(("top array", bplist([[0xA2, 1, 2], ascii("lineage"), ascii("X")])))
        cases.append(("top string", bplist([ascii("lineage")])))
        cases.append(("dup lineage", bplist([dict([1, 1, 2], [3, 5, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5), ascii("Y")])))
        cases.append(("dup lineage int first", bplist([dict([1, 1], [4, 3]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)])))
        cases.append(("lineage int", bplist([dict([1, 2], [4, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)])))
        cases.append(("lineage dict self", bplist([dict([1, 2], [0, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)])))
        cases.append(("lineage ref out of range", bplist([dict([1, 2], [99, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)])))
        cases.append(("skipped ref out of range", bplist([dict([1, 2, 3], [5, 6, 99]), ascii("lineage"), ascii("through"), ascii("keys"), ascii("X"), ascii("X"), int1(5)])))
        cases.append(("skipped value self", bplist([dict([1, 2, 3], [4, 5, 0]), ascii("lineage"), ascii("through"), ascii("keys"), ascii("X"), int1(5)])))
        cases.append(("key non-string", bplist([dict([4, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)])))
        cases.append(("huge numObjects", bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)], numObjects: 1 << 60)))
        cases.append(("huge numObjects 2^32", bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)], numObjects: 1 << 32)))
        cases.append(("table offset huge", bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)], tableOffset: UInt64.max)))
        cases.append(("dict count huge", bplist([[0xDF, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], ascii("lineage")])))
        cases.append(("dict count 15 short", bplist([[0xDF, 0x10, 0x20], ascii("lineage")])))
        cases.append(("through huge", bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), [0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]])))
        cases.append(("through negative", bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFB]])))
        cases.append(("through 16 byte", bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), [0x14] + [UInt8](repeating: 0xFF, count: 16)])))
        cases.append(("through real", bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), [0x23, 0x40, 0x14, 0, 0, 0, 0, 0, 0]])))
        cases.append(("empty", Array("bplist00".utf8)))
        cases.append(("truncated", Array(bplist([dict([1, 2], [3, 4]), ascii("lineage"), ascii("through"), ascii("X"), int1(5)]).dropLast(5))))
        for (name, bytes) in cases {
            var options = PlistReadOptions()
            options.onlyTopLevelKeys = ["lineage", "through"]
            let only = try? bytes.withUnsafeBufferPointer { b throws(PlistError) in try PlistValue.decode(b, options: options) }
            let full = try? bytes.withUnsafeBufferPointer { b throws(PlistError) in try PlistValue.decode(b, options: PlistReadOptions()) }
            let dir = try TemporaryDirectory()
            let path = dir.path("settings.plist")
            try FileManager.default.createDirectory(atPath: PlistFile.companionDirectory(for: path), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try Data(bytes).write(to: URL(filePath: SettingsProvenanceLog.path(for: path)))
            let marks = SettingsProvenanceLog.fileMarks(for: path)
            let fresh = try? SettingsProvenanceLog.load(for: path)
            if let marks, case .dictionary(let f)? = full {
                #expect(f["lineage"]?.stringValue == marks.lineage, "\(name): the marks are the file's")
            }
            if name == "plain" { #expect(marks?.lineage == "X" && marks?.through == 5, "plain: \(String(describing: marks))") }
            if name == "top array" || name == "lineage int" || name == "truncated" { #expect(marks == nil, "\(name)") }
            _ = fresh
            if case .dictionary(let f)? = full, case .dictionary(let o)? = only {
                #expect(f["lineage"] == o["lineage"] && f["through"] == o["through"], "\(name)")
            }
        }
    }

    /// Random byte mutations of a real log file: fileMarks and the filtered decode never crash,
    /// and where the full decode succeeds, agree with it.
    @Test(arguments: 0..<4)
    func mutatedLogFiles(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &* 7919 &+ 1)
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var (a, _) = try twoWritersOfOneLineage(path)
        for i in 0..<30 { try set(path, ["n\(i)", "x"], .integer(PlistInteger(Int64(i))), recorder: &a, by: tool) }
        let original = try [UInt8](Data(contentsOf: URL(filePath: SettingsProvenanceLog.path(for: path))))
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let i = Int.random(in: 8..<bytes.count, using: &rng)
                bytes[i] = Bool.random(using: &rng) ? UInt8.random(in: 0...255, using: &rng) : bytes[i] ^ (1 << UInt8.random(in: 0...7, using: &rng))
            }
            var options = PlistReadOptions()
            options.onlyTopLevelKeys = ["lineage", "through"]
            let only = try? bytes.withUnsafeBufferPointer { b throws(PlistError) in try PlistValue.decode(b, options: options) }
            let full = try? bytes.withUnsafeBufferPointer { b throws(PlistError) in try PlistValue.decode(b, options: PlistReadOptions()) }
            if case .dictionary(let f)? = full {
                guard case .dictionary(let o)? = only else { Issue.record("full decodes, filtered does not"); continue }
                #expect(f["lineage"] == o["lineage"] && f["through"] == o["through"])
            }
        }
    }
}

private let fuzzKeys: [[String]] = [["a"], ["b"], ["c"], ["ns", "a"], ["ns", "b"], ["ns"], ["ns", "deep", "x"], ["x/y"], ["p", "q"], ["p"], ["e"], ["f"], ["g"]]

struct LineageFuzz {
    static func run(seed: Int, steps: Int = 140) throws -> String? {
        var rng = SplitMix64(seed: UInt64(seed) &* 0x1234567)
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        let limits = [20, 20, [3, 4, 7][seed % 3]]
        var recorders: [PlistRecorder?] = limits.map { PlistRecorder(limits: .init(count: $0)) }
        var knowns: [SettingsFileTransaction.Known?] = [nil, nil, nil]
        let writers = [SettingsProvenance.thisProcess(.tool), SettingsProvenance.thisProcess(.sync, device: "S"),
                       SettingsProvenance.thisProcess(.migration)]
        var ops: [String] = []
        for step in 0..<steps {
            let w = Int.random(in: 0..<recorders.count, using: &rng)
            let exists = FileManager.default.fileExists(atPath: path)
            let roll = Int.random(in: 0..<100, using: &rng)
            var op = "w\(w) "
            if roll < 2 {
                op += "bulk"
                try setMany(path, (0..<600).map { ["bulk\($0)"] }, .integer(PlistInteger(Int64(step))), recorder: &recorders[w], known: &knowns[w], by: writers[w])
            } else if roll < 6 && exists {
                op += "handedit"
                if case .dictionary(var d) = try PlistValue(decoding: Data(contentsOf: URL(filePath: path))) {
                    let k = fuzzKeys[Int.random(in: 0..<fuzzKeys.count, using: &rng)]
                    _ = d.setValue(.string("hand\(step)"), at: k[...])
                    try Data(PlistValue.dictionary(d).encodedBytes(as: .binary)).write(to: URL(filePath: path))
                }
            } else if roll < 10 {
                op += "oneshot"
                var t: PlistRecorder? = PlistRecorder(limits: .init(count: Bool.random(using: &rng) ? 20 : 5), refusesUnkeptDiscard: true)
                var k: SettingsFileTransaction.Known? = nil
                try setMany(path, [fuzzKeys[Int.random(in: 0..<fuzzKeys.count, using: &rng)]], .integer(PlistInteger(Int64(step))), recorder: &t, known: &k, by: writers[0])
            } else {
                let k = fuzzKeys[Int.random(in: 0..<fuzzKeys.count, using: &rng)]
                let remove = Int.random(in: 0..<8, using: &rng) == 0
                op += remove ? "rm \(k)" : "set \(k)"
                try setMany(path, [k], remove ? nil : .integer(PlistInteger(Int64(step))), recorder: &recorders[w], known: &knowns[w], by: writers[w])
            }
            ops.append(op)
            let fresh = try SettingsProvenanceLog.load(for: path)
            for r in recorders.indices where r == w || Int.random(in: 0..<4, using: &rng) == 0 {
                let before = recorders[r]?.log
                let log = recorders[r]?.currentLog(for: path)
                if log?.entries != fresh.entries || log?.isComplete != fresh.isComplete {
                    return "seed \(seed) step \(step) writer \(r) (lineage \(before?.lineage ?? "nil"), through \(before?.through ?? -1)) differs: \(diff(log, fresh)); ops: \(ops.suffix(12).joined(separator: " | "))"
                }
            }
        }
        return nil
    }
}

extension SettingsProvenanceLogLineageAttackTests {
    /// Three writers (history limits 20, 20 and 3, 4 or 7) with changes of one key, removals,
    /// changes too large for a generation, hand edits and one-shot writers (the tool's), in
    /// random turns: after each step, the writer's log, and now and then another's, reads as a
    /// fresh reader's load.
    @Test(arguments: 0..<12)
    func writersInRandomTurnsReadAsTheFileDoes(seed: Int) throws {
        let failure = try LineageFuzz.run(seed: seed)
        #expect(failure == nil, "\(failure ?? "")")
    }
}
