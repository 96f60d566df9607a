import Foundation
import Settings
import Testing
import SettingsTestSupport

/// Hostile and broken model files: refused clearly, moved aside, never overwritten or waited on.
@Suite("Models: broken and hostile files")
struct ModelFileFaultsTests {
    @Test func aStringXMLCannotCarryMakesTheFileBinaryUnlessXMLWasAskedFor() throws {
        DiagnosticsRecorder.start()
        let dir = try TemporaryDirectory()
        let url = dir.file("esc.plist")
        try PlistValue.dictionary(["name": "Ada", "extra": 1]).write(to: url)
        var model = try AttackPlain.load(from: url)
        model.name = "\u{1B}]0;title\u{07}"
        // XML asked for by name: refused, naming the file; the file is left as it was.
        let before = try Data(contentsOf: url)
        #expect {
            try model.save(to: url, format: .xml)
        } throws: { error in
            "\(error)".contains(url.path)
        }
        #expect(try Data(contentsOf: url) == before)
        // XML by the file's format: the file becomes binary, reported, and reads back whole.
        try model.save(to: url)
        #expect(try Data(contentsOf: url).starts(with: Array("bplist00".utf8)))
        #expect(try AttackPlain.load(from: url) == model)
        #expect(try stored(url)["extra"] == 1)
        #expect(!DiagnosticsRecorder.diagnostics(containing: "\(url.path): saved as a binary property list").isEmpty)
    }

    @Test func anEmptyFileIsRefusedOnLoadAndMovedAsideOnSave() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("empty.plist")
        try Data().write(to: url)
        #expect {
            try AttackPlain.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path)
        }
        try AttackPlain().save(to: url)
        #expect(try AttackPlain.load(from: url) == AttackPlain())
    }

    @Test func aDirectoryInPlaceOfTheFileIsRefusedAndLeftAlone() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("dir.plist")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: url.appending(path: "inside"))
        #expect {
            try AttackPlain.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path) && "\(error)".contains("directory")
        }
        #expect {
            try AttackPlain().save(to: url)
        } throws: { error in
            "\(error)".contains(url.path)
        }
        #expect(try Data(contentsOf: url.appending(path: "inside")) == Data("keep".utf8))
    }

    @Test(.timeLimit(hangLimit)) func aSymbolicLinkLoopIsRefusedClearly() throws {
        let dir = try TemporaryDirectory()
        let a = dir.file("a.plist")
        let b = dir.file("b.plist")
        try FileManager.default.createSymbolicLink(atPath: a.path, withDestinationPath: b.path)
        try FileManager.default.createSymbolicLink(atPath: b.path, withDestinationPath: a.path)
        #expect {
            try AttackPlain.load(from: a)
        } throws: { error in
            "\(error)".contains("a.plist") || "\(error)".contains("b.plist")
        }
        #expect(throws: SettingsError.self) { try AttackPlain().save(to: a) }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: a.path) == b.path)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: b.path) == a.path)
    }

    @Test func aSaveThatCannotWriteThrowsAndLeavesTheFileIntact() throws {
        // Runs as root in CI, where a read-only directory does not stop writes: a parent that
        // is a file does, for anyone.
        let dir = try TemporaryDirectory()
        let blocker = dir.file("blocker")
        try Data("not a directory".utf8).write(to: blocker)
        #expect {
            try AttackPlain().save(to: blocker.appending(path: "p.plist"))
        } throws: { error in
            "\(error)".contains("blocker")
        }
        #expect(try Data(contentsOf: blocker) == Data("not a directory".utf8))
        // And a directory whose write permission is gone, where that is enforced.
        let locked = dir.url.appending(path: "locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        let url = locked.appending(path: "p.plist")
        try PlistValue.dictionary(["name": "Ada", "extra": 1]).write(to: url)
        let before = try Data(contentsOf: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: locked.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: locked.path) }
        var model = try AttackPlain.load(from: url)
        model.name = "Bea"
        if getuid() != 0 {
            #expect(throws: SettingsError.self) { try model.save(to: url) }
            #expect(try Data(contentsOf: url) == before)
        }
    }

    @Test func aFileRewrittenInPlaceBetweenLoadAndSaveIsReadAgain() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("p.plist")
        try PlistValue.dictionary(["name": "Ada", "volume": 0.5, "aa": 1]).write(to: url)
        var model = try AttackPlain.load(from: url)
        // Same size, same inode, written in place by another process.
        let edited = try PlistValue.dictionary(["name": "Ada", "volume": 0.5, "bb": 2]).encoded(as: .xml)
        let handle = try FileHandle(forWritingTo: url)
        try handle.write(contentsOf: edited)
        try handle.close()
        model.volume = 0.75
        try model.save(to: url)
        #expect(try stored(url) == ["name": "Ada", "volume": 0.75, "bb": 2])
    }

    @Test(.timeLimit(hangLimit)) func aBinaryFileWithSharedObjectsLoadsAndKeepsItsValues() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("dag.plist")
        // Objects: 0 root, 1 "Ada", 2 "name", 3 first array, 4 "extra", 5.. the rest, leaf last.
        var objects: [[UInt8]] = [[0xD2, 2, 4, 1, 3], [0x53] + Array("Ada".utf8), [0x54] + Array("name".utf8), [0xA2, 5, 5], [0x55] + Array("extra".utf8)]
        let levels = 10
        for level in 0..<levels { objects.append([0xA2, UInt8(6 + level), UInt8(6 + level)]) }
        objects.append([0x10, 42])
        try Data(binaryPlist(objects)).write(to: url)
        let expected = try PlistValue(contentsOf: url)
        var model = try AttackPlain.load(from: url)
        #expect(model.name == "Ada")
        model.volume = 0.1
        try model.save(to: url)
        var after = try stored(url)
        after["volume"] = nil
        #expect(PlistValue.dictionary(after) == expected)
        // A DAG too big to expand is refused with the file named, and kept aside on save.
        var huge: [[UInt8]] = [[0xD1, 1, 2], [0x55] + Array("extra".utf8)]
        for level in 0..<60 { huge.append([0xA2, UInt8(3 + level), UInt8(3 + level)]) }
        huge.append([0x10, 1])
        let hugeFile = Data(binaryPlist(huge))
        try hugeFile.write(to: url)
        #expect {
            try AttackPlain.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path)
        }
        try AttackPlain().save(to: url)
        let aside = try corruptCopies(in: dir, of: "dag.plist")
        #expect(aside.count == 1)
        if let first = aside.first { #expect(try Data(contentsOf: dir.file(first)) == hugeFile) }
    }

    @Test func truncatedFilesAreRefusedWithThePathAndMovedAsideOnSave() throws {
        let dir = try TemporaryDirectory()
        let full: PlistValue = ["name": "Ada", "volume": 0.3, "extra": ["a", "b"]]
        for format in [PlistFormat.xml, .binary] {
            let bytes = try full.encoded(as: format)
            // XML cut inside `</plist>` (a missing final newline is no truncation); binary
            // cut anywhere loses its trailer.
            for cut in [1, bytes.count / 2, bytes.count - (format == .xml ? 5 : 1)] {
                let url = dir.file("t-\(format)-\(cut).plist")
                let truncated = bytes.prefix(cut)
                try truncated.write(to: url)
                #expect {
                    try AttackPlain.load(from: url)
                } throws: { error in
                    "\(error)".contains(url.path)
                }
                try AttackPlain().save(to: url)
                let aside = try corruptCopies(in: dir, of: url.lastPathComponent)
                #expect(aside.count == 1)
                if let first = aside.first { #expect(try Data(contentsOf: dir.file(first)) == truncated) }
            }
        }
    }

    @Test(.timeLimit(hangLimit)) func aFIFOOrAnEmptyPathIsRefusedWithoutBlocking() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.file("fifo.plist")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        #expect {
            try AttackPlain.load(from: fifo)
        } throws: { error in
            "\(error)".contains(fifo.path)
        }
        #expect(throws: SettingsError.self) { try AttackPlain().save(to: fifo) }
        var kind = stat()
        #expect(lstat(fifo.path, &kind) == 0 && (kind.st_mode & S_IFMT) == S_IFIFO)
        #expect(throws: SettingsError.self) { try AttackPlain.load(from: URL(filePath: "")) }
        #expect(throws: SettingsError.self) { try AttackPlain.load(from: dir.url) }
    }
}
