import Foundation
@testable import Settings
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// A `settings-fault model-edit` process: it loads the model file, says so, and saves its one
/// change when told to go.
private final class ModelEditor {
    let process = Process()
    private let input = Pipe(), output = Pipe(), errors = Pipe()

    init(_ file: URL, _ field: String, _ value: String) throws {
        process.executableURL = Fault.executable
        process.arguments = ["model-edit", file.path, field, value]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Waits for the next line the editor prints (blocking: the editor prints it at once).
    func line() -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let b = byte.first, b != UInt8(ascii: "\n") else { break }
            bytes.append(b)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func go() { input.fileHandleForWriting.write(Data("go\n".utf8)) }

    /// Waits for the editor to end; its status and standard error.
    func finish() -> (Int32, String) {
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}

/// Model files shared between processes (Docs/ModelFiles.md, "Several processes").
@Suite("Model files between processes")
struct ModelFileSharingTests {
    /// Two processes load the same file; one changes `name`, the other `theme`. Whatever order
    /// they save in (one after the other, or at once), both changes are in the file.
    @Test(.timeLimit(hangLimit), arguments: [false, true])
    func twoProcessesChangingDifferentFieldsBothKeepTheirChange(atOnce: Bool) throws {
        for round in 0..<3 {
            let dir = try TemporaryDirectory()
            let url = dir.file("profile.plist")
            try PlistValue.dictionary(["name": "Guest", "theme": "light", "extra": "kept"]).write(to: url)
            let first = try ModelEditor(url, "name", "Ada")
            let second = try ModelEditor(url, "theme", "dark")
            #expect(first.line() == "loaded" && second.line() == "loaded")  // both loaded before either saves
            first.go()
            if atOnce {
                second.go()
            } else {
                #expect(first.line() == "saved")
                second.go()
            }
            let (s1, e1) = first.finish(), (s2, e2) = second.finish()
            #expect(s1 == 0 && s2 == 0, "\(e1) \(e2)")
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
