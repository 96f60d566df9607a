import Foundation
@testable import Settings
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A model's file on disk: broken and hostile files, a file named two ways, files shared
/// between processes.
@Suite("Model files on disk")
struct ModelFileTests {
    // MARK: - Models: broken and hostile files
    // Hostile and broken model files: refused clearly, moved aside, never overwritten or waited on.

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

    // MARK: - Model files named two ways
    // A model file named two ways (through the user's link and as its target, `./`, `..`) is one
    // file: what loading remembered about it is found whichever name the save uses, so a change
    // another process saved meanwhile is kept.

    enum Alias: String, CaseIterable {
        case link = "through a link, saved to its target"
        case dot = "as dir/./NAME"
        case parent = "as dir/sub/../NAME"
    }

    @Test(arguments: Alias.allCases)
    func anotherProcesssChangeIsKeptWhenTheSaveNamesTheFileAnotherWay(_ alias: Alias) throws {
        let dir = try TemporaryDirectory()
        let real = dir.file("profile.plist")
        try PlistValue.dictionary(["name": "Ada", "volume": 0.5]).write(to: real)
        let loadedFrom: URL
        switch alias {
        case .link:
            loadedFrom = dir.file("link.plist")
            #expect(symlink(real.path, loadedFrom.path) == 0)
        case .dot:
            loadedFrom = URL(filePath: dir.url.path + "/./profile.plist")
        case .parent:
            try FileManager.default.createDirectory(at: dir.file("sub"), withIntermediateDirectories: true)
            loadedFrom = URL(filePath: dir.url.path + "/sub/../profile.plist")
        }
        var profile = try Profile.load(from: loadedFrom)
        #expect(profile.name == "Ada")
        // Another process renames the profile meanwhile.
        try PlistValue.dictionary(["name": "Someone else", "volume": 0.5]).write(to: real)
        profile.volume = 0.9
        try profile.save(to: real)
        let saved = try Profile.load(from: real)
        #expect(saved.volume == 0.9)
        #expect(saved.name == "Someone else", "\(alias.rawValue): the other process's change was lost")
    }

    // MARK: - Model files between processes
    // Model files shared between processes (Docs/ModelFiles.md, "Several processes").

    /// A `settings-fault model-edit` process: it loads the model file, prints `loaded`, and saves
    /// its one change (printing `saved`) when it reads `go`.
    private func modelEditor(_ file: URL, _ field: String, _ value: String) throws -> RunningProgram {
        try RunningProgram(Fault.executable, ["model-edit", file.path, field, value], input: true)
    }

    /// Two processes load the same file; one changes `name`, the other `theme`. Whatever order
    /// they save in (one after the other, or at once), both changes are in the file.
    @Test(.timeLimit(hangLimit), arguments: [false, true])
    func twoProcessesChangingDifferentFieldsBothKeepTheirChange(atOnce: Bool) throws {
        for round in 0..<3 {
            let dir = try TemporaryDirectory()
            let url = dir.file("profile.plist")
            try PlistValue.dictionary(["name": "Guest", "theme": "light", "extra": "kept"]).write(to: url)
            let first = try modelEditor(url, "name", "Ada")
            let second = try modelEditor(url, "theme", "dark")
            #expect(first.line() == "loaded" && second.line() == "loaded")  // both loaded before either saves
            first.write("go\n")
            if atOnce {
                second.write("go\n")
            } else {
                #expect(first.line() == "saved")
                second.write("go\n")
            }
            let one = first.finish(), two = second.finish()
            #expect(one.status == 0 && two.status == 0, "\(one.stderr) \(two.stderr)")
            let stored = try PlistValue(contentsOf: url)
            #expect(stored["name"] == "Ada", "round \(round): the name change was lost")
            #expect(stored["theme"] == "dark", "round \(round): the theme change was lost")
            #expect(stored["extra"] == "kept")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["profile.plist"])  // no lock file left
        }
    }

    /// In one process: a field changed on both sides takes this process's value, and fields it
    /// did not touch keep what the other saved.
    @Test func aFieldChangedOnBothSidesTakesTheLastSaveAndOthersAreKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("profile.plist")
        try PlistValue.dictionary(["name": "Guest", "volume": 0.5]).write(to: url)
        var mine = try Profile.load(from: url)
        // Another writer (as another process would, by the file only).
        try PlistValue.dictionary(["name": "Theirs", "volume": 0.9, "favourites": ["x"]]).write(to: url)
        mine.name = "Mine"
        try mine.save(to: url)
        let stored = try PlistValue(contentsOf: url)
        #expect(stored["name"] == "Mine")
        #expect(stored["volume"] == 0.9)
        #expect(stored["favourites"] == ["x"])
    }

    /// Memory kept per model file is bounded: loading and saving many files while keeping no
    /// model leaves at most `ModelFiles.capacity` files and `byteCapacity` bytes remembered.
    @Test func theMemoryOfModelFilesIsBounded() throws {
        let dir = try TemporaryDirectory()
        let padding = String(repeating: "x", count: 100_000)
        for i in 0..<300 {
            let url = dir.file("m\(i).plist")
            try PlistValue.dictionary(["name": .string(padding), "volume": 0.5]).write(to: url)
            var profile = try Profile.load(from: url)
            profile.volume = Double(i)
            try profile.save(to: url)
        }
        let (files, bytes) = ModelFiles.remembered
        #expect(files <= ModelFiles.capacity)
        #expect(bytes <= ModelFiles.byteCapacity || files == 1)  // one file larger than the budget is kept alone
        #expect(files > 0)
        // The most recent is still remembered: saving it again does not need to read it.
        var last = try Profile.load(from: dir.file("m299.plist"))
        last.volume = 1
        try last.save(to: dir.file("m299.plist"))
        #expect(ModelFiles.memory(for: dir.file("m299.plist").path, as: Profile.self) != nil)
    }
}
