import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

/// Files planted in a settings file's companion directory are outside input: they never crash a
/// reader or a writer, and names that are not a writer's own never stand for a generation
/// (issue 28, item 12). The names are those of the generations directory an earlier version of the
/// library kept (one file per generation), which readers still read and the next writer moves into
/// the history journal.
struct PlantedCompanionFilesTests {
    let writer = SettingsProvenance(origin: .write, process: "MyApp", pid: 1, date: Date(timeIntervalSince1970: 0))

    /// The history an earlier version left: its generations directory holding generation 1.
    private func earlierHistory(_ target: String) throws {
        let directory = PlistHistory.directory(for: target)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: PlistFile.companionDirectory(for: target))
        try plant("1.plist", in: target, number: 1)
    }

    private func plant(_ name: String, in target: String, date: Date = Date(timeIntervalSince1970: 0), number: Int? = nil) throws {
        var entry: PlistDictionary = [
            "origin": "write", "date": .date(date), "changed": ["k"],
            "contents": .data(try PlistValue.dictionary(["k": 1]).encoded(as: .binary)),
        ]
        if let number { entry["number"] = .integer(PlistInteger(Int64(number))) }
        try PlistValue.dictionary(entry).encoded(as: .binary).write(to: URL(filePath: PlistHistory.directory(for: target) + "/" + name))
    }

    @Test func aGenerationWithTheLargestNumberDoesNotMakeTheNextOneOverflow() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        try earlierHistory(target)
        try plant("9223372036854775807.plist", in: target)
        try plant("99999999999999999999.plist", in: target)
        // Ignored: not a number a writer keeps.
        #expect(try PlistHistory.keep(Data([2]), changed: [], by: writer, for: target) == 2)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2])
    }

    @Test func namesAWriterNeverWritesDoNotAliasGenerations() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        try earlierHistory(target)
        for name in ["03.plist", "+4.plist", "-5.plist", "0.plist", " 6.plist", "7.plist.bak"] { try plant(name, in: target) }
        #expect(try PlistHistory.list(for: target).map(\.number) == [1])
        #expect(try PlistHistory.keep(Data([2]), changed: [], by: writer, for: target) == 2)
        #expect(try PlistHistory.list(for: target).map(\.number) == [1, 2])  // moved into the journal
    }

    @Test(arguments: [1e300, -1e300, .nan, .infinity])
    func aDateNoCalendarHoldsIsAnUnknownDate(seconds: Double) throws {
        let entry = SettingsProvenance(origin: .write, process: "MyApp", pid: 1, date: Date(timeIntervalSince1970: seconds))
        #expect(entry.summary == "set by MyApp pid 1 at an unknown date")
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        try earlierHistory(target)
        try plant("2.plist", in: target, date: Date(timeIntervalSince1970: seconds))
        let listed = try PlistHistory.list(for: target)
        #expect(listed.map(\.number) == [1, 2])
        #expect(listed.last?.writer.summary.hasSuffix("an unknown date") == true)
        // Moved into the journal by the next writer, and read back alike.
        try PlistHistory.keep(Data([3]), changed: [], by: writer, for: target)
        let moved = try PlistHistory.list(for: target)
        #expect(moved.map(\.number) == [1, 2, 3])
        #expect(moved[1].writer.summary.hasSuffix("an unknown date"))
        #expect(!FileManager.default.fileExists(atPath: PlistHistory.directory(for: target) + "/1.plist"))
    }
}

/// Every generation kept can be read back and listed, however large (issue 28, item 10).
struct LargeGenerationsTests {
    let writer = SettingsProvenance(origin: .write, process: "MyApp", pid: 1, date: Date(timeIntervalSince1970: 0))

    @Test func aFileAtTheSizeLimitKeepsAGenerationThatReadsBack() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        let bytes = Data(count: PlistFile.maximumSize - 196)
        let number = try #require(try PlistHistory.keep(bytes, changed: [["k"]], by: writer, for: target))
        let kept = try #require(try PlistHistory.generation(number, for: target))
        #expect(kept.bytes.count == bytes.count)
        #expect(try PlistHistory.newest(for: target)?.number == number)
    }

    @Test func aFileOverTheSizeLimitKeepsNoGeneration() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        #expect(throws: PlistFile.Failure.self) {
            try PlistHistory.keep(Data(count: PlistFile.maximumSize + 1), changed: [], by: writer, for: target)
        }
        #expect(try PlistHistory.list(for: target).isEmpty)
    }

    @Test func summariesListWhatTheGenerationsSayWithoutTheirBytes() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path("settings.plist")
        for i in 1...3 {
            try PlistHistory.keep(Data(count: 100_000 * i), changed: [["k\(i)"], ["n", "x"]], by: writer, for: target)
        }
        let full = try PlistHistory.list(for: target)
        let summaries = try PlistHistory.summaries(for: target)
        #expect(summaries.map(\.number) == full.map(\.number))
        #expect(summaries.map(\.writer) == full.map(\.writer))
        #expect(summaries.map(\.changed) == full.map(\.changed))
        #expect(summaries.allSatisfy { $0.bytes.isEmpty })
        #expect(full.map(\.bytes.count) == [100_000, 200_000, 300_000])
    }
}
