import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing

/// The one change of a settings file every writer makes (issue 29, part 2): lock, re-read,
/// apply, check, record, replace, unlock, and what each step leaves when it refuses.
struct SettingsFileTransactionTests {
    let me = SettingsProvenance.thisProcess(.tool)

    private func write(_ contents: PlistDictionary, to path: String) throws {
        try PlistValue.dictionary(contents).encoded(as: .xml).write(to: URL(filePath: path))
    }

    private func set(_ key: String, _ value: PlistValue) -> (SettingsFileTransaction.Current) -> SettingsFileTransaction.Edit? {
        { current in
            var contents = current.contents ?? PlistDictionary()
            contents[key] = value
            return .init(contents: contents, changed: [[key]], writer: me)
        }
    }

    private func run(_ path: String, options: SettingsFileTransaction.Options = .init(),
                     known: SettingsFileTransaction.Known? = nil, recorder: inout PlistRecorder?,
                     check: (PlistDictionary?, PlistDictionary) throws(SettingsFileTransaction.Failure) -> Void = { _, _ throws(SettingsFileTransaction.Failure) in },
                     _ edit: (SettingsFileTransaction.Current) -> SettingsFileTransaction.Edit?) throws(SettingsFileTransaction.Failure)
        -> SettingsFileTransaction.Outcome {
        try SettingsFileTransaction.run(at: path, options: options, known: known, recorder: &recorder, check: check) {
            (current) throws(SettingsFileTransaction.Failure) in edit(current)
        }
    }

    @Test func aChangeIsMergedIntoWhatTheFileHoldsNowAndRecordedOnce() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("App/settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        guard case .written(let first) = try run(path, recorder: &recorder, set("a", 1)) else {
            Issue.record("not written")
            return
        }
        // Another writer changes the file: a writer that still knows the old contents re-reads it.
        try write(["a": 1, "b": 2], to: path)
        var stale: SettingsFileTransaction.Current?
        guard case .written = try run(path, known: first.known, recorder: &recorder, { current in
            stale = current
            return set("c", 3)(current)
        }) else {
            Issue.record("not written")
            return
        }
        #expect(stale?.wasReread == true)
        #expect(try PlistValue(contentsOf: URL(filePath: path)) == .dictionary(["a": 1, "b": 2, "c": 3]))
        let generations = try PlistHistory.list(for: path)
        // The other writer's change is kept as a generation of its own, then this one.
        #expect(generations.map(\.writer.origin) == [.tool, .changedOnDisk, .tool])
        #expect(generations.last?.changed == [["c"]])
        let log = try SettingsProvenanceLog.load(for: path)
        #expect(log.entries[["c"]]?.origin == .tool)
        #expect(log.entries[["b"]]?.origin == .changedOnDisk)
        // The directories of a new file are owner-only.
        var s = stat()
        #expect(stat(dir.path("App"), &s) == 0 && s.st_mode & 0o777 == 0o700)
    }

    @Test func aDirectoryRemovedSinceTheLastSaveIsCreatedAgainAndAFilePresentNeedsNone() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("App/Deeper/settings.plist")
        var recorder: PlistRecorder? = PlistRecorder(limits: .init(count: 0, bytes: 0))
        guard case .written(let first) = try run(path, recorder: &recorder, set("a", 1)) else {
            Issue.record("not written")
            return
        }
        // The file is there: the walk of the link rule saw it, so its directories exist.
        #expect(try PlistFile.target(of: path).existed)
        guard case .written = try run(path, known: first.known, recorder: &recorder, set("b", 2)) else {
            Issue.record("not written")
            return
        }
        // Removed behind the writer's back (what it last knew is gone): created again.
        try FileManager.default.removeItem(atPath: dir.path("App"))
        #expect(try PlistFile.target(of: path).existed == false)
        guard case .written = try run(path, known: first.known, recorder: &recorder, set("c", 3)) else {
            Issue.record("not written")
            return
        }
        #expect(try PlistValue(contentsOf: URL(filePath: path)) == .dictionary(["c": 3]))
    }

    @Test func anEditThatChangesNothingWritesNothing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        try write(["a": 1], to: path)
        let before = try PlistFile.identity(of: path)
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        guard case .unchanged(let current) = try run(path, recorder: &recorder, { _ in nil }) else {
            Issue.record("written")
            return
        }
        #expect(current.contents == ["a": 1])
        #expect(try PlistFile.identity(of: path) == before)
        #expect(try PlistHistory.list(for: path).isEmpty)
    }

    @Test func aRefusedCheckLeavesTheFileAndItsHistoryAsTheyWere() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        try write(["port": 80], to: path)
        let bytes = try Data(contentsOf: URL(filePath: path))
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        #expect {
            _ = try run(path, recorder: &recorder, check: { (_, new) throws(SettingsFileTransaction.Failure) in
                if new["port"]?.integerValue.map({ $0 > 65535 }) == true {
                    throw SettingsFileTransaction.Failure(.refused, path, "port out of range")
                }
            }, set("port", 70000))
        } throws: { error in
            (error as? SettingsFileTransaction.Failure)?.detail == "port out of range"
        }
        #expect(try Data(contentsOf: URL(filePath: path)) == bytes)
        #expect(try PlistHistory.list(for: path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: SettingsProvenanceLog.path(for: path)))
    }

    @Test func aHeldLockMakesAWriterThatDoesNotWaitBusyAndOneThatWaitsFailAfterItsBound() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        try write(["a": 1], to: path)
        let bytes = try Data(contentsOf: URL(filePath: path))
        let holder = try #require(try PlistFile.tryLock(PlistFile.lockPath(for: path)))
        defer { holder.release() }
        var recorder: PlistRecorder?
        var options = SettingsFileTransaction.Options()
        options.lockWait = .none
        guard case .busy(let lock) = try run(path, options: options, recorder: &recorder, set("a", 2)) else {
            Issue.record("not busy")
            return
        }
        #expect(lock == PlistFile.lockPath(for: path))
        options.lockWait = .upTo(.milliseconds(50))
        #expect {
            _ = try run(path, options: options, recorder: &recorder, set("a", 2))
        } throws: { error in
            guard case .locked = (error as? SettingsFileTransaction.Failure)?.kind else { return false }
            return true
        }
        #expect(try Data(contentsOf: URL(filePath: path)) == bytes)
    }

    @Test func aMalformedFileIsRefusedOrMovedAsideOnlyWhileItIsTheOneSeen() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        let garbage = Data("<plist><dict><key>a</key>".utf8)
        try garbage.write(to: URL(filePath: path))
        var recorder: PlistRecorder?
        var seen: PlistFile.Identity?
        #expect {
            _ = try run(path, recorder: &recorder, set("a", 1))
        } throws: { error in
            guard case .malformed(let identity, let problem) = (error as? SettingsFileTransaction.Failure)?.kind else { return false }
            seen = identity
            return problem.path == path
        }
        #expect(try Data(contentsOf: URL(filePath: path)) == garbage)
        // Rewritten since it was seen: not moved aside (an editor may be halfway through it).
        try Data("<plist><dict><key>b</key>".utf8).write(to: URL(filePath: path))
        var options = SettingsFileTransaction.Options()
        options.malformed = .moveAside(ifStill: seen, keeping: 3)
        #expect(throws: SettingsFileTransaction.Failure.self) { try run(path, options: options, recorder: &recorder, set("a", 1)) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "<plist><dict><key>b</key>")
        // Still the file seen: moved aside, and the change written in its place.
        options.malformed = .moveAside(ifStill: try PlistFile.identity(of: path), keeping: 3)
        guard case .written(let written) = try run(path, options: options, recorder: &recorder, set("a", 1)) else {
            Issue.record("not written")
            return
        }
        let destination = try #require(written.current.movedAside?.destination)
        #expect(try String(contentsOfFile: destination, encoding: .utf8) == "<plist><dict><key>b</key>")
        #expect(try PlistValue(contentsOf: URL(filePath: path)) == .dictionary(["a": 1]))
    }

    @Test func aLinkToAFileThatIsNotAPropertyListIsNeverWrittenNorLockedBeside() throws {
        let dir = try TemporaryDirectory()
        let other = dir.path("notes.txt")
        try Data("just text\n".utf8).write(to: URL(filePath: other))
        let path = dir.path("settings.plist")
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: other)
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        #expect {
            _ = try run(path, recorder: &recorder, set("a", 1))
        } throws: { error in
            guard case .unusable = (error as? SettingsFileTransaction.Failure)?.kind else { return false }
            return true
        }
        #expect(try String(contentsOfFile: other, encoding: .utf8) == "just text\n")
        #expect(!FileManager.default.fileExists(atPath: PlistFile.lockPath(for: other)))
    }

    @Test func xmlThatCannotCarryAValueFallsBackToBinaryUnlessXMLWasAskedFor() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var recorder: PlistRecorder?
        guard case .written(let written) = try run(path, recorder: &recorder, set("bell", "\u{7}")) else {
            Issue.record("not written")
            return
        }
        #expect(written.fellBackToBinary != nil)
        #expect(written.known.format == .binary)
        var options = SettingsFileTransaction.Options()
        options.format = .xml
        #expect(throws: SettingsFileTransaction.Failure.self) { try run(path, options: options, recorder: &recorder, set("b", 1)) }
    }

    @Test func aFileLargerThanTheLimitIsNeverWritten() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var options = SettingsFileTransaction.Options()
        options.maximumSize = 1000
        var recorder: PlistRecorder? = PlistRecorder(limits: .init())
        #expect(throws: SettingsFileTransaction.Failure.self) {
            try run(path, options: options, recorder: &recorder, set("big", .string(String(repeating: "x", count: 2000))))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try PlistHistory.list(for: path).isEmpty)
    }
}
