import Foundation
import SettingsPlist
import SettingsFiles
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// The tool's file handling goes through `PlistFile`: the library's lock file, link rule and
/// size limit.
struct FileSafetyCLITests {
    static let plist = "<plist><dict><key>k</key><integer>1</integer></dict></plist>"

    // MARK: One lock

    /// The tool waits for the lock at `PlistFile.lockPath(for:)` (the library's, see
    /// `SettingsFileLockTests` in SettingsTests), computed through a link to the file it leads to.
    @Test func theToolTakesTheLockAtTheLibrarysLockPath() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.url.appending(path: "dotfiles"), withIntermediateDirectories: true)
        let real = try dir.write("dotfiles/app.plist", Self.plist).path
        #expect(symlink(real, dir.path("settings.plist")) == 0)
        let lock = try #require(try PlistFile.tryLock(PlistFile.lockPath(for: real)))
        let out = try CLI.run("write", dir.path("settings.plist"), "k", "2")
        lock.release()
        #expect(out.status == 1)
        #expect(out.stderr.contains("another process held the lock \(PlistFile.lockPath(for: real))"))
        #expect(try String(contentsOfFile: real, encoding: .utf8) == Self.plist)
        #expect(try CLI.run("write", dir.path("settings.plist"), "k", "2").status == 0)
    }

    @Test(arguments: [["write", "FILE", "k", "2"], ["delete", "FILE", "k"], ["insert", "n", "-integer", "1", "FILE"]])
    func editingAPlainFileLeavesNoLockFileBesideIt(command: [String]) throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("Defaults.plist", Self.plist).path
        let out = try CLI.run(command.map { $0 == "FILE" ? file : $0 }, environment: [:])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try dir.listing() == ["Defaults.plist"])
    }

    @Test func aLockFileAProgramMadeStaysAndAnApplicationDomainKeepsItsOwn() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("settings.plist", Self.plist).path
        try Data().write(to: URL(filePath: PlistFile.lockPath(for: file)))  // made by a program's store
        #expect(try CLI.run("write", file, "k", "2").status == 0)
        #expect(try dir.listing() == [".settings.plist.lock", "settings.plist"])
        let out = try CLI.run(environment: ["XDG_CONFIG_HOME": dir.url.path], "write", "MyApp", "k", "1")
        #expect(out.status == 0, "\(out.stderr)")
        // An application's domain keeps its lock and its history (the companion directory).
        #expect(try dir.listing("MyApp") == [".settings.plist.lock", ".settings.plist.meta", "settings.plist"])
    }

    // MARK: Links into other people's files

    /// A link planted in place of a settings file never makes `settings write` replace what it
    /// leads to: not a file that is not a property list, not through a link of another user's,
    /// not into a directory of another user's.
    @Test func writeThroughAHostileLinkLeavesItsTargetByteIdentical() throws {
        let dir = try TemporaryDirectory()
        let passwd = try dir.write("passwd", "root:x:0:0:root:/root:/bin/bash\n").path
        let before = try dir.bytes("passwd")
        #expect(symlink(passwd, dir.path("app.plist")) == 0)
        var out = try CLI.run("write", dir.path("app.plist"), "k", "1")
        #expect(out.status == 1)
        #expect(try dir.bytes("passwd") == before)
        #expect(try dir.listing() == ["app.plist", "passwd"])  // no lock, no quarantine, no temporary file
        guard geteuid() == 0 else { return }
        // A link that belongs to another user, even to a real property list.
        let plist = try dir.write("theirs.plist", Self.plist).path
        let plistBefore = try dir.bytes("theirs.plist")
        #expect(symlink(plist, dir.path("foreign.plist")) == 0 && lchown(dir.path("foreign.plist"), 4321, 4321) == 0)
        out = try CLI.run("write", dir.path("foreign.plist"), "k", "2")
        #expect(out.status == 1)
        #expect(out.stderr.contains("owned by user 4321"))
        #expect(try dir.bytes("theirs.plist") == plistBefore)
        // A link to a new file in a directory of another user's.
        let other = dir.path("other")
        #expect(mkdir(other, 0o777) == 0 && chown(other, 4321, 4321) == 0)
        #expect(symlink(other + "/new.plist", dir.path("new.plist")) == 0)
        out = try CLI.run("write", dir.path("new.plist"), "k", "3")
        #expect(out.status == 1)
        #expect(try dir.listing("other") == [])
    }

    // MARK: One size limit

    @Test func importRefusesAFileTheLibraryCouldNotLoad() throws {
        let dir = try TemporaryDirectory()
        // A data value just over the limit: binary, so the file is barely larger than it.
        let big = PlistValue.dictionary(["blob": .data(Data(count: PlistFile.maximumSize + 1))])
        try big.encoded(as: .binary).write(to: dir.url.appending(path: "big.plist"))
        let out = try CLI.run(environment: ["XDG_CONFIG_HOME": dir.url.path], "import", "MyApp", dir.path("big.plist"))
        #expect(out.status == 1)
        #expect(out.stderr.contains("larger than the limit of 64.0 MiB"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("MyApp/settings.plist")))
        // Under the limit as binary, but its XML form (base64) would not be: not written either.
        let xmlTooBig = PlistValue.dictionary(["blob": .data(Data(count: PlistFile.maximumSize / 4 * 3 + 1024))])
        try xmlTooBig.encoded(as: .binary).write(to: dir.url.appending(path: "b.plist"))
        let second = try CLI.run(environment: ["XDG_CONFIG_HOME": dir.url.path], "import", "MyApp", dir.path("b.plist"))
        #expect(second.status == 1)
        #expect(second.stderr.contains("larger than the limit"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("MyApp/settings.plist")))
    }

    @Test func writesThroughASymbolicLinkKeepTheLinkAndChangeItsTarget() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.url.appending(path: "dotfiles"), withIntermediateDirectories: true)
        let target = try dir.write("dotfiles/settings.plist", "<plist><dict/></plist>").path
        let link = dir.path("link.plist")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try CLI.run("write", link, "k", "1").status == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try CLI.run("read", target, "k").stdout == "1\n")
    }

    @Test(arguments: [
        ["convert", "binary1", "FILE"], ["convert", "xml1", "FILE"], ["convert", "json", "FILE"],
        ["write", "FILE", "k", "2"], ["delete", "FILE", "k"], ["insert", "n", "-integer", "1", "FILE"],
        ["replace", "k", "-string", "x", "FILE"], ["-remove", "k", "FILE"],
    ])
    func rewritesKeepPermissionsAndOwner(command: [String]) throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("m.plist", "<plist><dict><key>k</key><integer>1</integer></dict></plist>").path
        #expect(chmod(file, 0o640) == 0)
        let owned = geteuid() == 0
        if owned { #expect(chown(file, 65534, 65534) == 0) }
        let out = try CLI.run(command.map { $0 == "FILE" ? file : $0 }, environment: [:])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try dir.permissions(of: dir.file("m.plist")) == 0o640)
        if owned {
            var s = stat()
            #expect(stat(file, &s) == 0)
            #expect(s.st_uid == 65534 && s.st_gid == 65534)
        }
        #expect(try dir.listing().filter { $0 != ".m.plist.lock" } == ["m.plist"])  // no temporary file left
    }

    @Test func exportOverAnExistingFileKeepsItsMode() throws {
        let dir = try TemporaryDirectory()
        let domain = dir.path("d.plist")
        #expect(try CLI.run("write", domain, "k", "1").status == 0)
        let target = try dir.write("backup.plist", "old").path
        #expect(chmod(target, 0o600) == 0)
        #expect(try CLI.run("export", domain, target).status == 0)
        #expect(try dir.permissions(of: dir.file("backup.plist")) == 0o600)
    }

    @Test func permissionDeniedIsReportedAsPermissionDenied() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.url.appending(path: "MyApp"), withIntermediateDirectories: true)
        let file = try dir.write("MyApp/settings.plist", "<plist><dict/></plist>").path
        #expect(chmod(file, 0o000) == 0)
        let env = ["XDG_CONFIG_HOME": dir.url.path]
        for arguments in [["read", "MyApp"], ["write", "MyApp", "k", "1"], ["keys", "MyApp"]] {
            let out = try CLI.runUnprivileged(arguments, environment: env)
            #expect(out.status == 1)
            #expect(out.stderr == "settings: \(file): cannot read file: permission denied\n")
        }
    }

    @Test func aDirectoryGivenAsAFileIsNamedAsSuch() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.url.appending(path: "sub"), withIntermediateDirectories: true)
        let sub = dir.path("sub")
        for arguments in [["read", sub], ["convert", "xml1", sub], ["print", sub], ["lint", sub]] {
            let out = try CLI.run(arguments, environment: [:])
            #expect(out.status == 1)
            #expect(out.stderr.hasSuffix("\(sub): cannot read file: it is a directory, not a file\n"))
            #expect(!out.stderr.contains("CocoaError"))
        }
    }
}
