import Foundation
@testable import SettingsPlist
@testable import SettingsFiles
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// `PlistFile.companionDirectory(for:)`: where a settings file's history, provenance and schema live.
struct PlistFileCompanionTests {
    @Test func theCompanionDirectoryIsDotNameDotMetaBesideTheFile() {
        #expect(PlistFile.companionDirectory(for: "/home/ada/.config/App/settings.plist") == "/home/ada/.config/App/.settings.plist.meta")
    }

    @Test("the name is the file's directory, /., its name and .meta, for every shape of path", arguments: [
        "/home/ada/.config/App/settings.plist", "/settings.plist", "settings.plist", "App/settings.plist",
        "/home/ada/Réglages/préférences.plist", "/home/ada/App/", "", "/", "a//b.plist",
    ])
    func theNameIsBuiltFromTheFilesDirectoryAndName(_ path: String) {
        #expect(PlistFile.companionDirectory(for: path) == PlistFile.directory(of: path) + "/." + PlistFile.name(of: path) + ".meta")
    }

    @Test func aPathSplitsIntoItsDirectoryAndName() {
        #expect(PlistFile.directory(of: "/home/ada/settings.plist") == "/home/ada")
        #expect(PlistFile.name(of: "/home/ada/settings.plist") == "settings.plist")
        #expect(PlistFile.directory(of: "/settings.plist") == "/")
        #expect(PlistFile.name(of: "/settings.plist") == "settings.plist")
        #expect(PlistFile.directory(of: "settings.plist") == ".")
        #expect(PlistFile.name(of: "settings.plist") == "settings.plist")
        #expect(PlistFile.directory(of: "/home/Réglages/é.plist") == "/home/Réglages")
        #expect(PlistFile.name(of: "/home/Réglages/é.plist") == "é.plist")
        #expect(PlistFile.name(of: "/home/ada/") == "")
        #expect(PlistFile.companionDirectory(for: "/settings.plist") == "//.settings.plist.meta")
        #expect(PlistFile.companionDirectory(for: "settings.plist") == "./.settings.plist.meta")
    }

    @Test func itIsCreatedOwnerOnly() throws {
        let dir = try TemporaryDirectory()
        let made = try PlistFile.makeCompanionDirectory(for: dir.path("settings.plist"))
        var s = stat()
        #expect(lstat(made, &s) == 0)
        #expect(s.st_mode & 0o777 == 0o700)
        #expect(try PlistFile.existingCompanionDirectory(for: dir.path("settings.plist")) == made)
    }

    @Test func aMissingOneIsNil() throws {
        let dir = try TemporaryDirectory()
        #expect(try PlistFile.existingCompanionDirectory(for: dir.path("settings.plist")) == nil)
    }

    @Test func aLinkInItsPlaceIsRefusedAndNothingIsCreatedThrough() throws {
        let dir = try TemporaryDirectory()
        let elsewhere = dir.path("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        #expect(symlink(elsewhere, PlistFile.companionDirectory(for: dir.path("settings.plist"))) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.makeCompanionDirectory(for: dir.path("settings.plist")) }
        #expect(throws: PlistFile.Failure.self) { try PlistFile.existingCompanionDirectory(for: dir.path("settings.plist")) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    @Test func oneOthersCanWriteToIsRefused() throws {
        let dir = try TemporaryDirectory()
        let meta = PlistFile.companionDirectory(for: dir.path("settings.plist"))
        #expect(mkdir(meta, 0o700) == 0)
        #expect(chmod(meta, 0o777) == 0)
        #expect(throws: PlistFile.Failure.self) { try PlistFile.makeCompanionDirectory(for: dir.path("settings.plist")) }
    }
}
