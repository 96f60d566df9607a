import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

/// A generation that pushes the oldest out reuses its file (issue 29, part 3): no inode is
/// allocated and no block freed per save, and no reader ever takes a reused file for a wrong
/// generation.
struct GenerationRecyclingTests {
    /// One change through the transaction, by a writer that keeps its recorder (a store).
    private func change(_ path: String, _ key: String, _ value: PlistValue, recorder: inout PlistRecorder?) throws {
        _ = try SettingsFileTransaction.run(at: path, options: .init(), known: nil, recorder: &recorder) {
            (current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? in
            var contents = current.contents ?? PlistDictionary()
            contents[key] = value
            return .init(contents: contents, changed: [[key]], writer: SettingsProvenance.thisProcess(.write))
        }
    }

    private func inode(_ path: String) throws -> UInt64 {
        try #require(try PlistFile.identity(of: path)).inode
    }

    @Test func theOldestGenerationsFileBecomesTheNewOne() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init(count: 3))
        for i in 0..<3 { try change(path, "k", .integer(PlistInteger(Int64(1000 + i))), recorder: &recorder) }
        let generations = PlistHistory.directory(for: path)
        #expect(try PlistHistory.list(for: path).map(\.number) == [1, 2, 3])
        let oldest = try inode(generations + "/1.plist")
        try change(path, "k", 2000, recorder: &recorder)  // same size: generation 1's file is reused
        #expect(try PlistHistory.list(for: path).map(\.number) == [2, 3, 4])
        #expect(try inode(generations + "/4.plist") == oldest)
        let newest = try #require(try PlistHistory.generation(4, for: path))
        #expect(try newest.contents()["k"] == 2000)
        #expect(newest.changed == [["k"]])
        // Who set the key is read back from the reused file's provenance.
        #expect(try SettingsProvenanceLog.load(for: path).entries[["k"]]?.origin == .write)
    }

    @Test func aSmallerGenerationIsCreatedAnewSoAMappedFileNeverShrinks() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init(count: 2))
        try change(path, "k", .string(String(repeating: "x", count: 4000)), recorder: &recorder)
        try change(path, "k", "y", recorder: &recorder)
        let generations = PlistHistory.directory(for: path)
        let oldest = try inode(generations + "/1.plist")
        try change(path, "k", "z", recorder: &recorder)  // smaller than generation 1: not reused
        #expect(try PlistHistory.list(for: path).map(\.number) == [2, 3])
        #expect(try inode(generations + "/3.plist") != oldest)
        #expect(try PlistHistory.generation(3, for: path)?.contents()["k"] == "z")
    }

    @Test func aGenerationFileWithAnotherLinkIsNeverOverwritten() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init(count: 2))
        try change(path, "k", 1000, recorder: &recorder)
        try change(path, "k", 1001, recorder: &recorder)
        let generations = PlistHistory.directory(for: path)
        let elsewhere = dir.path("kept-elsewhere.plist")
        #expect(link(generations + "/1.plist", elsewhere) == 0)
        let before = try Data(contentsOf: URL(filePath: elsewhere))
        try change(path, "k", 1002, recorder: &recorder)
        #expect(try Data(contentsOf: URL(filePath: elsewhere)) == before)
        #expect(try PlistHistory.list(for: path).map(\.number) == [2, 3])
        #expect(try PlistHistory.generation(3, for: path)?.contents()["k"] == 1002)
    }

    /// What a writer killed while reusing a file, or a power cut, can leave: readers skip it.
    @Test func aReusedFileLeftHalfWayIsNeverReadAsAGeneration() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init(count: 5))
        for i in 0..<3 { try change(path, "k\(i)", .integer(PlistInteger(Int64(i))), recorder: &recorder) }
        let generations = PlistHistory.directory(for: path)
        // Killed after the first byte was cleared and the file renamed.
        var cleared = try [UInt8](Data(contentsOf: URL(filePath: generations + "/1.plist")))
        cleared[0] = 0
        try Data(cleared).write(to: URL(filePath: generations + "/4.plist"))
        // A power cut that kept a rename and lost the new bytes: generation 2's values as 5.
        try FileManager.default.copyItem(atPath: generations + "/2.plist", toPath: generations + "/5.plist")
        #expect(try PlistHistory.list(for: path).map(\.number) == [1, 2, 3])
        #expect(try PlistHistory.summaries(for: path).map(\.number) == [1, 2, 3])
        #expect(PlistHistory.provenanceDeltas(for: path, after: 0).map(\.number) == [1, 2, 3])
    }
}
