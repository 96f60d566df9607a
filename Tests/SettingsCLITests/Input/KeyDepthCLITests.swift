import Foundation
import Testing
import SettingsTestSupport

/// The tool refuses key paths and values that no file can hold, instead of writing a file that
/// `read` and `lint` then refuse.
struct KeyDepthCLITests {
    private static func deep(_ count: Int, separator: String) -> String {
        Array(repeating: "k", count: count).joined(separator: separator)
    }

    @Test(arguments: [600, 60_000])
    func writeRefusesAKeyPathNoFileCanHold(components: Int) throws {
        let dir = try TemporaryDirectory()
        let env = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(["write", "App", "keep", "1"], environment: env).status == 0)
        let file = dir.url.appending(path: "App/settings.plist")
        let before = try Data(contentsOf: file)
        // Before: 600 exited 0 with a file read/lint refuse; 60,000 crashed the tool.
        let out = try CLI.run(["write", "App", Self.deep(components, separator: "/"), "1"], environment: env)
        #expect(out.status == 1)
        #expect(out.stderr.contains("\(components) components"))
        #expect(out.stderr.utf8.count < 1000)
        #expect(try Data(contentsOf: file) == before)
        #expect(try CLI.run(["lint", file.path], environment: env).status == 0)
    }

    @Test func insertRefusesADottedKeyPathNoFileCanHold() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("p.plist", "<plist><dict><key>a</key><true/></dict></plist>").path
        let before = try Data(contentsOf: URL(filePath: file))
        let out = try CLI.run(["-insert", Self.deep(600, separator: "."), "-bool", "YES", file], environment: [:])
        #expect(out.status == 1)
        #expect(out.stderr.contains("600 components"))
        #expect(try Data(contentsOf: URL(filePath: file)) == before)
    }

    @Test func aValueThatNestsTooDeepUnderItsKeyIsRefused() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("p.plist", "<plist><dict/></plist>").path
        let before = try Data(contentsOf: URL(filePath: file))
        // The file's dictionary and 511 more on the key path: the value's dictionary is the 513th.
        let out = try CLI.run(["write", file, Self.deep(512, separator: "/"), "{ a = 1; }"], environment: [:])
        #expect(out.status == 1)
        #expect(out.stderr.contains("deeper than 512"))
        #expect(try Data(contentsOf: URL(filePath: file)) == before)
        // One level less fits, and reads back.
        #expect(try CLI.run(["write", file, Self.deep(511, separator: "/"), "{ a = 1; }"], environment: [:]).status == 0)
        #expect(try CLI.run(["lint", file], environment: [:]).status == 0)
    }
}
