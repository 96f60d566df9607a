import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

/// A replacement begun, then made or given up (``PlistFile/Replacement``): what the settings
/// file's transaction does around its record step, so the device writes the new bytes meanwhile.
struct PlistFileReplacementTests {
    /// The names in `directory` that are a writer's temporary files.
    private func temporaryFiles(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains(".tmp-") }
    }

    @Test func aBegunReplacementLeavesTheFileAsItIsUntilItIsMade() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        try Data("old".utf8).write(to: URL(filePath: path))
        let replacement = try PlistFile.Replacement(path, with: Data("new".utf8), permissions: 0o640, owner: nil)
        #expect(try Data(contentsOf: URL(filePath: path)) == Data("old".utf8))
        #expect(try temporaryFiles(in: dir).count == 1)

        let identity = try replacement.commit()
        #expect(try Data(contentsOf: URL(filePath: path)) == Data("new".utf8))
        #expect(try dir.permissions(of: URL(filePath: path)) == 0o640)
        #expect(try PlistFile.identity(of: path) == identity)
        #expect(try temporaryFiles(in: dir).isEmpty)
    }

    @Test func anAbandonedReplacementLeavesTheFileAndNothingBesideIt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        try Data("old".utf8).write(to: URL(filePath: path))
        let before = try PlistFile.identity(of: path)
        let replacement = try PlistFile.Replacement(path, with: Data("new".utf8), permissions: 0o600, owner: nil)
        replacement.abandon()
        #expect(try Data(contentsOf: URL(filePath: path)) == Data("old".utf8))
        #expect(try PlistFile.identity(of: path) == before)
        #expect(try temporaryFiles(in: dir).isEmpty)
    }

    @Test func aReplacementThatCannotBeginThrowsAndLeavesNothing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("missing/settings.plist")
        #expect(throws: PlistFile.Failure.self) {
            _ = try PlistFile.Replacement(path, with: Data("new".utf8), permissions: 0o600, owner: nil)
        }
        #expect(try temporaryFiles(in: dir).isEmpty)
    }

    @Test func aRecordStepThatRefusesTheChangeLeavesNoTemporaryFileBesideTheFile() throws {
        // The tool's recorder refuses a change that would discard a hand edit no generation
        // holds when keeping one fails (here: `generations` is a planted plain file). Its
        // refusal comes before the new bytes are written beside the file (so a full disk reports
        // it, not the failed write), and nothing of the change is left behind.
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        try PlistValue.dictionary(["port": 80]).encoded(as: .xml).write(to: URL(filePath: path))
        let bytes = try Data(contentsOf: URL(filePath: path))
        let meta = try PlistFile.makeCompanionDirectory(for: path)
        try Data("planted".utf8).write(to: URL(filePath: meta + "/" + PlistHistory.directoryName))
        var recorder: PlistRecorder? = PlistRecorder(limits: .init(), refusesUnkeptDiscard: true)
        let me = SettingsProvenance.thisProcess(.tool)
        #expect {
            _ = try SettingsFileTransaction.run(at: path, options: .init(), known: nil, recorder: &recorder) {
                (current) throws(SettingsFileTransaction.Failure) in
                var contents = current.contents ?? PlistDictionary()
                contents["port"] = 81
                return .init(contents: contents, changed: [["port"]], writer: me)
            }
        } throws: { error in
            guard let failure = error as? SettingsFileTransaction.Failure, case .refused = failure.kind else { return false }
            return failure.detail.contains("'port'")
        }
        #expect(try Data(contentsOf: URL(filePath: path)) == bytes)
        #expect(try temporaryFiles(in: dir).isEmpty)
    }
}
