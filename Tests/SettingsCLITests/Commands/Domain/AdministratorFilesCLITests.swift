import Foundation
import SettingsPlist
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `settings` tool and an administrator's files: `$XDG_CONFIG_DIRS/App/locked.plist` refuses
/// every change of a locked key, `writable` says so, `explain` names the files.
struct AdministratorFilesCLITests {
    /// A domain `App` with a user file, and a system directory locking `Network/proxy`.
    struct Layout {
        let dir: TemporaryDirectory
        var environment: [String: String] { ["XDG_CONFIG_HOME": dir.path("home"), "XDG_CONFIG_DIRS": dir.path("xdg")] }
        var userFile: String { dir.path("home/App/settings.plist") }
        var locks: String { dir.path("xdg/App/locked.plist") }

        init() throws {
            dir = try TemporaryDirectory()
            for sub in ["home/App", "xdg/App"] {
                try FileManager.default.createDirectory(atPath: dir.path(sub), withIntermediateDirectories: true)
            }
            try PlistValue.dictionary(["Network": ["proxy": "mine", "timeout": 5], "volume": 3]).write(to: URL(filePath: userFile))
            try dir.writePlist("xdg/App/locked.plist", "<dict><key>Network</key><dict><key>proxy</key><string>http://proxy:3128</string></dict></dict>")
            try dir.writePlist("xdg/App/settings.plist", "<dict><key>theme</key><string>dark</string></dict>")
        }

        func run(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
            let out = try CLI.run(arguments, environment: environment)
            return (out.status, out.stdout, out.stderr)
        }
    }

    @Test(arguments: [
        ["write", "App", "Network/proxy", "http://elsewhere"],
        ["write", "App", "Network", "-dict", "proxy", "x"],
        ["delete", "App", "Network/proxy"],
        ["delete", "App", "Network"],
        ["delete", "App"],
        ["rename", "App", "Network/proxy", "oldProxy"],
    ])
    func everyChangeOfALockedKeyIsRefusedNamingTheLocksFileAndTheFileIsUntouched(arguments: [String]) throws {
        let layout = try Layout()
        let before = try Data(contentsOf: URL(filePath: layout.userFile))
        let out = try CLI.run(arguments, environment: layout.environment)
        #expect(out.status == 1, "\(arguments): \(out.stderr)")
        #expect(out.stderr.contains("is locked by \(layout.locks); nothing was changed"), "\(out.stderr)")
        #expect(try Data(contentsOf: URL(filePath: layout.userFile)) == before)
    }

    @Test func importAndThePlutilVerbsOnTheDomainsFileAreRefusedToo() throws {
        let layout = try Layout()
        let before = try Data(contentsOf: URL(filePath: layout.userFile))
        let incoming = try layout.dir.writePlist("incoming.plist", "<dict><key>Network</key><dict><key>proxy</key><string>x</string></dict></dict>").path
        let imported = try layout.run("import", "App", incoming)
        #expect(imported.status == 1 && imported.stderr.contains("key 'Network/proxy' is locked by \(layout.locks)"))
        let replaced = try layout.run("-replace", "Network.proxy", "-string", "x", layout.userFile)
        #expect(replaced.status == 1 && replaced.stderr.contains("is locked by \(layout.locks)"), "\(replaced.stderr)")
        #expect(try Data(contentsOf: URL(filePath: layout.userFile)) == before)
        // A key beside the lock is written as ever.
        #expect(try layout.run("write", "App", "Network/timeout", "-int", "9").status == 0)
    }

    @Test func writableSaysWhetherAKeyMayChange() throws {
        let layout = try Layout()
        let locked = try layout.run("writable", "App", "Network/proxy")
        #expect(locked.status == 0 && locked.stdout == "false\n")
        #expect(locked.stderr.contains("'Network/proxy' is locked by \(layout.locks)"))
        #expect(try layout.run("writable", "App", "Network").stdout == "false\n")  // a namespace holding a lock
        let free = try layout.run("writable", "App", "Network/timeout")
        #expect(free.status == 0 && free.stdout == "true\n" && free.stderr.isEmpty)
    }

    @Test func explainShowsTheLockAndTheSystemDefaults() throws {
        let layout = try Layout()
        let out = try layout.run("explain", "App", "Network/proxy")
        #expect(out.status == 0)
        #expect(maskingTimes(out.stdout) == """
            Network/proxy = http://proxy:3128 (from locked: \(layout.locks))
            * locked  \(layout.locks): http://proxy:3128 (locked by \(layout.locks))
              user    \(layout.userFile): mine (changed on disk (edited by hand, or by a program that records no provenance), seen at TIME)
              system  \(layout.dir.path("xdg/App/settings.plist")): not set

            """)
        let theme = try layout.run("explain", "App", "theme")
        #expect(theme.stdout.hasPrefix("theme = dark (from system: \(layout.dir.path("xdg/App/settings.plist")))"))
    }

    @Test func filesAnotherUserOwnsOrCanWriteAreIgnoredWithAWarning() throws {
        try #require(geteuid() == 0, "needs root to give a file to another user")
        let layout = try Layout()
        #expect(chown(layout.locks, 65534, 65534) == 0)
        let out = try layout.run("write", "App", "Network/proxy", "http://elsewhere")
        #expect(out.status == 0)
        #expect(out.stderr.contains("warning: \(layout.locks): ignored, not the administrator's file: \(layout.locks) belongs to user 65534"), "\(out.stderr)")
        #expect(chown(layout.locks, 0, 0) == 0 && chmod(layout.dir.path("xdg/App"), 0o777) == 0)
        let open = try layout.run("writable", "App", "Network/proxy")
        #expect(open.stdout == "true\n" && open.stderr.contains("is writable by everyone (mode 777)"))
    }
}
