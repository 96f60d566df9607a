import SettingsFiles
import Foundation
import Settings
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// The link rule applies to links in the middle of a path too: a directory link that is not the
/// process's user's (or root's) is never followed, and a file reached through the user's own
/// directory link that is not a property list is never moved aside or replaced.
@Suite("Directory links")
struct DirectoryLinkTests {
    /// `dir/etc/passwd` (not a property list) and `dir/via -> dir/etc`: the settings file
    /// `dir/via/passwd` is that file, reached through a link in the middle of its path.
    static func plantedDirectoryLink(in dir: TemporaryDirectory, owner: uid_t? = nil) throws -> (settings: URL, passwd: URL, etc: URL) {
        let etc = dir.url.appending(path: "etc")
        try FileManager.default.createDirectory(at: etc, withIntermediateDirectories: true)
        let passwd = etc.appending(path: "passwd")
        try Data(LinkRuleTests.passwd.utf8).write(to: passwd)
        let via = dir.url.appending(path: "via")
        #expect(symlink(etc.path, via.path) == 0)
        if let owner { #expect(lchown(via.path, owner, owner) == 0) }
        return (via.appending(path: "passwd"), passwd, etc)
    }

    static func listing(_ url: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    @Test(.timeLimit(hangLimit)) func theStoreNeverMovesAsideAFileReachedThroughADirectoryLink() async throws {
        let dir = try TemporaryDirectory()
        let (settings, passwd, etc) = try Self.plantedDirectoryLink(in: dir)
        let before = try Self.listing(etc)
        let store = SettingsStore.file(settings, autosaveDelay: nil, externalChanges: .ignored,
                                       options: PersistenceOptions(settleDelay: .milliseconds(1)))
        #expect(store.loadError != nil)
        store["mine"] = 1
        for _ in 0..<3 {  // a malformed plain file would be moved aside at a later save
            await #expect(throws: SettingsError.self) { try await store.flush() }
        }
        #expect(try Data(contentsOf: passwd) == Data(LinkRuleTests.passwd.utf8))
        #expect(try Self.listing(etc) == before, "something was moved aside or created in \(etc.path)")
    }

    @Test func aModelFileIsNeverSavedOverAFileReachedThroughADirectoryLink() throws {
        let dir = try TemporaryDirectory()
        let (settings, passwd, etc) = try Self.plantedDirectoryLink(in: dir)
        let before = try Self.listing(etc)
        var profile = Profile()
        profile.name = "Mallory"
        #expect(throws: SettingsError.self) { try profile.save(to: settings) }
        #expect(try Data(contentsOf: passwd) == Data(LinkRuleTests.passwd.utf8))
        #expect(try Self.listing(etc) == before)
    }

    @Test(.enabled(if: geteuid() == 0, "gives a link to another user"))
    func aDirectoryLinkOfAnotherUserIsNotFollowed() throws {
        let dir = try TemporaryDirectory()
        let theirs = dir.url.appending(path: "theirs")
        try FileManager.default.createDirectory(at: theirs, withIntermediateDirectories: true)
        let plist = theirs.appending(path: "real.plist")
        try PlistValue.dictionary(["theirs": 1]).write(to: plist)
        let bytes = try Data(contentsOf: plist)
        let via = dir.url.appending(path: "via")
        #expect(symlink(theirs.path, via.path) == 0 && lchown(via.path, 4321, 4321) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.target(of: via.appending(path: "real.plist").path) }
        var profile = Profile()
        profile.name = "Mallory"
        #expect(throws: SettingsError.self) { try profile.save(to: via.appending(path: "real.plist")) }
        #expect(try Data(contentsOf: plist) == bytes)
        #expect(try Self.listing(theirs) == ["real.plist"])
    }

    @Test func theUsersOwnDirectoryLinkToAPropertyListIsStillSavedThrough() throws {
        let dir = try TemporaryDirectory()
        let real = dir.url.appending(path: "dotfiles")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        try PlistValue.dictionary(["name": "Ada"]).write(to: real.appending(path: "p.plist"))
        #expect(symlink(real.path, dir.url.appending(path: "config").path) == 0)
        let settings = dir.url.appending(path: "config/p.plist")
        let target = try PlistFile.target(of: settings.path)
        #expect(target.path == real.appending(path: "p.plist").path)
        #expect(target.isThroughLink)
        var profile = try Profile.load(from: settings)
        profile.volume = 0.9
        try profile.save(to: settings)
        #expect(try Profile.load(from: real.appending(path: "p.plist")) == profile)
        // Relative links and `..` resolve as the kernel resolves them.
        #expect(symlink("dotfiles/../dotfiles", dir.url.appending(path: "relative").path) == 0)
        #expect(try PlistFile.target(of: dir.url.appending(path: "relative/p.plist").path).path
                == dir.url.appending(path: "dotfiles/../dotfiles/p.plist").path)
    }
}
