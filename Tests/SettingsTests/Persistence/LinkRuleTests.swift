import Dispatch
import Foundation
@testable import Settings
import SettingsTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The link rule (Docs/Persistence.md, "Links"): a link planted in place of a settings file or a
/// model file never makes this process replace, move aside or create anything where it leads.
@Suite("Link rule")
struct LinkRuleTests {
    static let passwd = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n"

    /// The three hostile shapes: a link (the process's own) to a file that is not a property
    /// list; a link belonging to another user (to a real property list); a link into a
    /// directory of another user's. The last two need root (to give things away).
    struct Victim {
        let name: String
        let link: URL
        /// Files whose bytes must not change, with their bytes now.
        let files: [(URL, Data)]
        /// Directories whose listing must not change, with their listing now.
        let directories: [(URL, [String])]
    }

    static func victims(in dir: TemporaryDirectory) throws -> [Victim] {
        let fm = FileManager.default
        let etc = dir.url.appending(path: "etc")
        try fm.createDirectory(at: etc, withIntermediateDirectories: true)
        let passwd = etc.appending(path: "passwd")
        try Data(Self.passwd.utf8).write(to: passwd)
        func listing(_ url: URL) throws -> [String] { try fm.contentsOfDirectory(atPath: url.path).sorted() }
        var victims = [Victim]()
        let toPasswd = dir.file("passwd-link.plist")
        #expect(symlink(passwd.path, toPasswd.path) == 0)
        victims.append(Victim(name: "a link to a file that is not a property list", link: toPasswd,
                              files: [(passwd, try Data(contentsOf: passwd))], directories: [(etc, try listing(etc))]))
        guard geteuid() == 0 else { return victims }
        let theirs = dir.url.appending(path: "theirs")
        try fm.createDirectory(at: theirs, withIntermediateDirectories: true)
        let plist = theirs.appending(path: "real.plist")
        try PlistValue.dictionary(["theirs": 1]).write(to: plist)
        let foreign = dir.file("foreign-link.plist")
        #expect(symlink(plist.path, foreign.path) == 0 && lchown(foreign.path, 4321, 4321) == 0)
        victims.append(Victim(name: "a link that belongs to another user", link: foreign,
                              files: [(plist, try Data(contentsOf: plist))], directories: [(theirs, try listing(theirs))]))
        let other = dir.url.appending(path: "other")
        try fm.createDirectory(at: other, withIntermediateDirectories: true)
        #expect(chown(other.path, 4321, 4321) == 0)
        let into = dir.file("into-other.plist")
        #expect(symlink(other.appending(path: "new.plist").path, into.path) == 0)
        victims.append(Victim(name: "a link into a directory of another user's", link: into,
                              files: [], directories: [(other, try listing(other))]))
        return victims
    }

    static func expectUntouched(_ victim: Victim) throws {
        for (url, bytes) in victim.files {
            #expect(try Data(contentsOf: url) == bytes, "\(victim.name): \(url.path) changed")
        }
        for (url, names) in victim.directories {
            #expect(try FileManager.default.contentsOfDirectory(atPath: url.path).sorted() == names, "\(victim.name): something appeared in \(url.path)")
        }
    }

    @Test(.timeLimit(hangLimit)) func theStoreNeverWritesThroughAHostileLink() async throws {
        let dir = try TemporaryDirectory()
        for victim in try Self.victims(in: dir) {
            let store = SettingsStore.file(victim.link, autosaveDelay: nil, externalChanges: .ignored,
                                           options: PersistenceOptions(settleDelay: .milliseconds(1)))
            #expect(store.loadError != nil, "\(victim.name): not reported at load")
            store["mine"] = 1
            for _ in 0..<3 {  // more than once: a malformed file would be moved aside at a later save
                await #expect(throws: SettingsError.self, "\(victim.name)") { try await store.flush() }
            }
            #expect(store["mine"] == 1)  // kept in memory
            try Self.expectUntouched(victim)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: victim.link.path).isEmpty == false)
        }
    }

    @Test func aModelFileIsNeverSavedThroughAHostileLink() throws {
        let dir = try TemporaryDirectory()
        for victim in try Self.victims(in: dir) {
            var profile = Profile()
            profile.name = "Mallory"
            #expect(throws: SettingsError.self, "\(victim.name)") { try profile.save(to: victim.link) }
            try Self.expectUntouched(victim)
        }
    }

    @Test func theUsersOwnLinkToAPropertyListIsStillSavedThrough() throws {
        let dir = try TemporaryDirectory()
        let real = dir.file("real.plist")
        try PlistValue.dictionary(["name": "Ada"]).write(to: real)
        #expect(symlink(real.path, dir.file("link.plist").path) == 0)
        var profile = try Profile.load(from: dir.file("link.plist"))
        profile.volume = 0.9
        try profile.save(to: dir.file("link.plist"))
        #expect(try Profile.load(from: real) == profile)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file("link.plist").path) == real.path)
    }

    @Test func aSymlinkedSettingsFileIsSavedThroughToItsTarget() async throws {
        let dir = try TemporaryDirectory()
        let dotfiles = dir.url.appending(path: "dotfiles")
        try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
        let target = dotfiles.appending(path: "app.plist")
        try PlistValue.dictionary(["kept": true]).write(to: target)
        try FileManager.default.createSymbolicLink(atPath: dir.file().path, withDestinationPath: target.path)
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store["kept"] == true)
        store["new"] = 1
        try await store.flush()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file().path) == target.path)
        #expect(try PlistValue(contentsOf: target) == ["kept": true, "new": 1])
        #expect(FileManager.default.fileExists(atPath: dotfiles.appending(path: ".app.plist.lock").path))
    }

    @Test(.timeLimit(hangLimit)) func aLinkToADeviceIsNeverOpened() async throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: dir.file().path, withDestinationPath: "/dev/zero")
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        #expect(store["a"] == nil)
        #expect(store.loadError?.description.contains("character device") == true)
    }
}
