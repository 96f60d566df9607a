import Foundation
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `settings diff`.
struct DiffCommandTests {
    @Test func diffListsAddedRemovedAndChangedKeyPaths() throws {
        let dir = try TemporaryDirectory()
        let a = dir.path("a.plist"), b = dir.path("b.plist")
        for (file, args) in [(a, ["Net/timeout", "30"]), (a, ["gone", "1"]), (b, ["Net/timeout", "60"]), (b, ["added", "\"x\""])] {
            _ = try CLI.run("write", file, args[0], args[1])
        }
        let result = try CLI.run("diff", a, b)
        #expect(result.status == 1)
        #expect(result.stdout == "~ Net/timeout: 30 -> 60\n- gone = 1\n+ added = x\n")
        #expect(try CLI.run("diff", a, a).status == 0)
    }

    @Test func diffShowsChangesOfTypeAlone() throws {
        let dir = try TemporaryDirectory()
        let a = try dir.write("a.plist", """
            <plist><dict><key>x</key><integer>1</integer><key>y</key><integer>1</integer><key>z</key><integer>1</integer>
            <key>list</key><array><string>a</string><integer>2</integer></array></dict></plist>
            """).path
        let b = try dir.write("b.plist", """
            <plist><dict><key>x</key><real>1</real><key>y</key><true/><key>z</key><string>1</string>
            <key>list</key><array><string>a</string><integer>3</integer></array></dict></plist>
            """).path
        let out = try CLI.run("diff", a, b)
        #expect(out.status == 1)
        #expect(out.stdout == """
            ~ x: 1 (integer) -> 1.0 (real)
            ~ y: 1 (integer) -> true (bool)
            ~ z: 1 (integer) -> 1 (string)
            ~ list: (a, 2) -> (a, 3)

            """)
    }

    @Test func diffTakesFilesByExtensionOrExistenceNotForDomains() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write("a.bplist", "<plist><dict><key>k</key><integer>1</integer></dict></plist>").path
        _ = try dir.write("b.json", #"{"k": 2}"#).path
        _ = try dir.write("plainname", "<plist><dict><key>k</key><integer>1</integer></dict></plist>").path
        let different = try CLI.run(["diff", "a.bplist", "b.json"], environment: [:], in: dir.url)
        #expect(different.status == 1)
        #expect(different.stdout == "~ k: 1 -> 2\n")
        #expect(try CLI.run(["diff", "plainname", "a.bplist"], environment: [:], in: dir.url).status == 0)
    }
}
