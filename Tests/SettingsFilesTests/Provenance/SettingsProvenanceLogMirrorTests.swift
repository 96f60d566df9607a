import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

/// `SettingsProvenanceLog.mirror(into:slot:)` and `PlistRecorder.publishedLog()`: the copies a
/// writer hands to readers in turn answer as the log itself does, however it changed between.
struct SettingsProvenanceLogMirrorTests {
    let tool = SettingsProvenance(origin: .tool, process: "settings", pid: 7, date: Date(timeIntervalSince1970: 10))
    let app = SettingsProvenance(origin: .write, process: "MyApp", pid: 8, date: Date(timeIntervalSince1970: 20))

    /// What a reader of `log` sees for every leaf of `contents`, and whether the log is complete.
    private func answers(_ log: SettingsProvenanceLog, _ contents: PlistDictionary) -> [String: String] {
        var out: [String: String] = ["complete": "\(log.isComplete)"]
        for key in contents.keys {
            let who = log.provenance(of: [key], in: contents, fileDate: Date(timeIntervalSince1970: 99))
            out[key] = who.map { "\($0.origin) \($0.process ?? "-") \($0.date.timeIntervalSince1970)" } ?? "none"
        }
        return out
    }

    @Test func eachCopyHandedOutAnswersAsTheLogDoes() {
        var contents: PlistDictionary = ["n": ["a": 1, "b": 2], "x": 3]
        for i in 0..<20 { contents["k\(i)"] = .integer(PlistInteger(Int64(i))) }
        var log = SettingsProvenanceLog()
        var copies = (SettingsProvenanceLog(), SettingsProvenanceLog())
        var handed: [SettingsProvenanceLog] = []  // readers keep what they were given
        var slot = 0
        func handOut() {
            if slot == 0 {
                log.mirror(into: &copies.0, slot: 0)
                handed.append(copies.0)
            } else {
                log.mirror(into: &copies.1, slot: 1)
                handed.append(copies.1)
            }
            slot ^= 1
            #expect(handed.last == log)
            #expect(answers(handed[handed.count - 1], contents) == answers(log, contents))
        }
        log.record(contents.keys.map { [$0] }, in: contents, by: tool)
        handOut()
        // One change between hand-outs, then two (each copy misses the one before its last).
        contents["x"] = 4
        log.record([["x"]], in: contents, by: app)
        handOut()
        contents["k1"] = 11
        log.record([["k1"]], in: contents, by: app)
        handOut()
        contents["k2"] = 22
        log.record([["k2"]], in: contents, by: app)
        contents["n"] = nil
        log.prune(to: contents)
        handOut()
        handOut()  // nothing changed
        // Another writer's generation, a value changed on disk, and entries set as a whole.
        log.apply(delta: ["k3": .bool(false)])
        contents["k4"] = 44
        _ = log.noteUnrecorded([["k4"]], in: contents, seenAt: Date(timeIntervalSince1970: 50))
        handOut()
        log.entries[["k5"]] = tool
        handOut()
        contents["k6"] = 66
        log.record([["k6"]], in: contents, by: app)
        handOut()
        handOut()
        // What was handed out earlier is unchanged by what came after.
        #expect(handed[0].entries[["x"]]?.process == "settings")
        #expect(handed[1].entries[["x"]]?.process == "MyApp")
        #expect(handed[1].entries[["k1"]]?.process == "settings")
    }

    @Test func aRecorderHandsOutItsLogAfterEverySave() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        var recorder = PlistRecorder(limits: PlistHistory.Limits())
        var contents: PlistDictionary = [:]
        for i in 0..<6 {
            let before = contents
            contents["k\(i % 3)"] = .integer(PlistInteger(Int64(i)))
            let edit = SettingsFileTransaction.Edit(contents: contents, changed: [["k\(i % 3)"]], writer: app)
            let bytes = try PlistValue.dictionary(contents).encoded(as: .xml)
            _ = try recorder.record(bytes, format: .xml, edit: edit, before: before, previous: nil, target: target)
            let published = recorder.publishedLog()
            #expect(published == recorder.log)
            #expect(published == (try SettingsProvenanceLog.load(for: target)))
        }
    }
}
