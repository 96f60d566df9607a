import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A writer trusts the identity of the file it last read or wrote only while it holds that file
/// open (`PlistFile.Held`): no other file can then get its inode number, so a file found with the
/// same device, inode, size and time is that very file. Where files are stamped with a coarse
/// clock (kernels before 6.13, file systems that keep whole seconds), two replacements of the
/// same size within one tick could otherwise give the path the old identity back, and the writer
/// would save its stale copy over the other writers' values.
struct PlistFileHeldTests {
    let me = SettingsProvenance.thisProcess(.tool)

    private func set(_ key: String, _ value: PlistValue) -> (SettingsFileTransaction.Current) throws(SettingsFileTransaction.Failure) -> SettingsFileTransaction.Edit? {
        { current in
            var contents = current.contents ?? PlistDictionary()
            contents[key] = value
            return .init(contents: contents, changed: [[key]], writer: me)
        }
    }

    private func written(_ path: String, known: SettingsFileTransaction.Known? = nil, reread: inout Bool?,
                         _ key: String, _ value: PlistValue) throws -> SettingsFileTransaction.Known {
        var recorder: PlistRecorder?
        let edit = set(key, value)
        let outcome = try SettingsFileTransaction.run(at: path, options: .init(), known: known, recorder: &recorder) {
            (current) throws(SettingsFileTransaction.Failure) in
            reread = current.wasReread
            return try edit(current)
        }
        guard case .written(let written) = outcome else { throw PlistFile.Failure("not written", code: EIO) }
        return written.known
    }

    private func inode(_ path: String) -> UInt64? {
        var s = stat()
        return lstat(path, &s) == 0 ? UInt64(s.st_ino) : nil
    }

    /// Another writer replaces the file again and again with files of the same size; none gets
    /// the inode of the file the first writer holds, and once one is stamped with the held
    /// file's time, the first writer still reads it again and keeps the other writer's value.
    @Test func noReplacementGetsTheHeldFilesInodeSoItsValuesAreReadAgain() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var reread: Bool?
        let mine = try written(path, reread: &reread, "other", "v000")
        #expect(mine.held?.identity == mine.identity)
        var other: SettingsFileTransaction.Known?
        for i in 1...40 {
            other = try written(path, known: other, reread: &reread, "other", .string(String(format: "v%03d", i)))
            #expect(inode(path) != mine.identity.inode, "replacement \(i) got the held file's inode")
        }
        // The last replacement as the coarse clock would stamp it: the held file's time, and
        // (values of one width) its size.
        let last = try #require(other).identity
        #expect(last.size == mine.identity.size)
        let time = timespec(tv_sec: Int(mine.identity.modifiedSeconds), tv_nsec: Int(mine.identity.modifiedNanoseconds))
        #expect(utimensat(AT_FDCWD, path, [time, time], 0) == 0)
        _ = try written(path, known: mine, reread: &reread, "mine", 1)
        #expect(reread == true)
        #expect(try PlistValue(contentsOf: URL(filePath: path)) == .dictionary(["other": "v040", "mine": 1]))
    }

    /// What a writer knows without holding the file is never trusted, even with the file's
    /// current identity: the file is read again.
    @Test func anIdentityNotHeldIsNotTrusted() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        var reread: Bool?
        let first = try written(path, reread: &reread, "a", 1)
        let stale = SettingsFileTransaction.Known(identity: first.identity, contents: ["a": 0, "stale": true],
                                                  format: first.format, held: nil)
        #expect(!stale.isStill(first.identity))
        #expect(first.isStill(first.identity))
        _ = try written(path, known: stale, reread: &reread, "b", 2)
        #expect(reread == true)
        #expect(try PlistValue(contentsOf: URL(filePath: path)) == .dictionary(["a": 1, "b": 2]))
    }

    /// The descriptor is the one the file was written through (no system call to take it),
    /// refers to the file written, and is closed when the last copy of what holds it goes.
    /// (Checked by what the descriptor refers to, not by counting the process's descriptors,
    /// which tests running beside this one open and close.)
    @Test func theHeldDescriptorIsTheWrittenFileAndClosedWithItsHolder() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        func refers(_ fd: Int32, to identity: PlistFile.Identity) -> Bool {
            var s = stat()
            return fstat(fd, &s) == 0 && UInt64(s.st_dev) == identity.device && UInt64(s.st_ino) == identity.inode
        }
        var reread: Bool?
        var first: (fd: Int32, identity: PlistFile.Identity)?
        var second: (fd: Int32, identity: PlistFile.Identity)?
        do {
            var known: SettingsFileTransaction.Known? = try written(path, reread: &reread, "a", 1)
            let held = try #require(known?.held)
            #expect(held.identity == known?.identity)
            #expect(refers(held.fd, to: held.identity))
            first = (held.fd, held.identity)
            // A second change holds the new file and lets the first go.
            known = try written(path, known: known, reread: &reread, "b", 2)
            let next = try #require(known?.held)
            second = (next.fd, next.identity)
            #expect(next.identity.inode == inode(path))
        }
        let (firstFD, firstIdentity) = try #require(first)
        let (secondFD, secondIdentity) = try #require(second)
        #expect(!refers(firstFD, to: firstIdentity))
        #expect(!refers(secondFD, to: secondIdentity))
    }

    /// A process holds at most `Held.budget` files (a store holds two): past it, a `Held` does
    /// not count as holding, its holder keeps nothing and trusts no identity, so ten thousand
    /// stores never run out of descriptors; one given back makes room again.
    @Test func heldFilesStayWithinTheBudget() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        try PlistValue.dictionary(["a": 1]).write(to: URL(filePath: path))
        let identity = try #require(try PlistFile.identity(of: path))
        #expect(PlistFile.Held.budget > 0)
        var mine: [PlistFile.Held] = []
        var refused: PlistFile.Held?
        for _ in 0...PlistFile.Held.budget {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            #expect(fd >= 0)
            let held = PlistFile.Held(fd: fd, identity: identity)
            if !held.isHolding {
                refused = held
                break
            }
            mine.append(held)
        }
        let over = try #require(refused, "one past the budget is not holding")
        #expect(over.kept == nil)
        let known = SettingsFileTransaction.Known(identity: identity, contents: ["a": 1], format: .xml, held: over.kept)
        #expect(!known.isStill(identity))
        mine.removeAll()
        let again = PlistFile.Held.take(path, as: identity)
        #expect(again?.isHolding == true)
    }

    /// Taking hold of a file after reading it succeeds only while it is still the file read.
    @Test func aFileIsTakenOnlyWhileItIsStillTheFileRead() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("settings.plist")
        try PlistValue.dictionary(["a": 1]).write(to: URL(filePath: path))
        let read = try #require(try PlistFile.read(path, followingLinks: false))
        #expect(PlistFile.Held.take(path, as: read.identity)?.identity == read.identity)
        try PlistValue.dictionary(["a": 2]).write(to: URL(filePath: path))
        #expect(PlistFile.Held.take(path, as: read.identity) == nil)
        #expect(PlistFile.Held.take(dir.path("missing.plist"), as: read.identity) == nil)
    }
}
