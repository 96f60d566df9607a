import Foundation
import SettingsPlist
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Another user who creates `.NAME.meta` beside a file in a directory both can write cannot stop
/// the owner's edits: the foreign companion directory is ignored for the edit, with one warning,
/// and nothing is written into it.
@Suite(.enabled(if: geteuid() == 0, "needs root to make a directory belong to another user"))
struct ForeignCompanionCLITests {
    /// A user id nobody on the machine is (chown to it needs no account).
    static let otherUser: uid_t = 12345

    /// Creates `.NAME.meta` beside `file`, owned by ``otherUser``, as that user would (mode 0700).
    func plantCompanion(beside file: URL) throws -> URL {
        let meta = file.deletingLastPathComponent().appending(path: "." + file.lastPathComponent + ".meta")
        try FileManager.default.createDirectory(at: meta, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(chown(meta.path, Self.otherUser, Self.otherUser) == 0)
        return meta
    }

    @Test func aFileInASharedDirectoryIsEditedDespiteAnotherUsersCompanionDirectory() throws {
        let dir = try TemporaryDirectory()
        #expect(chmod(dir.path, 0o1777) == 0)  // a shared directory, like /tmp
        let file = dir.file("shared.plist")
        try PlistValue.dictionary(["a": 1]).write(to: file)
        let meta = try plantCompanion(beside: file)
        for arguments in [["write", file.path, "b", "2"], ["replace", "c", "-integer", "3", file.path], ["delete", file.path, "a"]] {
            let out = try CLI.run(arguments, environment: [:])
            #expect(out.status == 0, "\(arguments): \(out.output)")
            #expect(out.stderr.split(separator: "\n").count == 1, "\(arguments): \(out.stderr)")
            #expect(out.stderr.contains("warning") && out.stderr.contains("belongs to user 12345"), "\(out.stderr)")
        }
        #expect(try PlistValue(contentsOf: file) == ["b": 2, "c": 3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: meta.path).isEmpty)
    }

    @Test func anApplicationDomainIsEditedDespiteAnotherUsersCompanionDirectory() throws {
        let dir = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        let app = dir.url.appending(path: "App")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: false)
        #expect(chmod(app.path, 0o1777) == 0)
        let file = app.appending(path: "settings.plist")
        try PlistValue.dictionary(["a": 1]).write(to: file)
        let meta = try plantCompanion(beside: file)
        for arguments in [["write", "App", "b", "2"], ["reset", "App"], ["import", "App", file.path]] {
            let out = try CLI.run(arguments, environment: environment)
            #expect(out.status == 0, "\(arguments): \(out.output)")
            #expect(out.stderr.split(separator: "\n").count == 1, "\(arguments): \(out.stderr)")
        }
        #expect(try CLI.run(environment: environment, "write", "App", "c", "3").status == 0)
        #expect(try PlistValue(contentsOf: file) == ["c": 3])
        let explained = try CLI.run(environment: environment, "explain", "App", "c")
        #expect(explained.status == 0, "\(explained.output)")
        #expect(explained.stdout.hasPrefix("c = 3 (from user: "), "\(explained.stdout)")
        #expect(explained.stderr.contains("warning"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: meta.path).isEmpty)
    }
}
