import Foundation
import Settings
import Testing
#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

/// A model file named two ways (through the user's link and as its target, `./`, `..`) is one
/// file: what loading remembered about it is found whichever name the save uses, so a change
/// another process saved meanwhile is kept.
@Suite("Model files named two ways")
struct ModelFileAliasTests {
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
}
