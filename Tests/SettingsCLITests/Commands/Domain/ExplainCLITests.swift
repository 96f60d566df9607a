import Foundation
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Testing

/// `settings explain` and `settings read` of renamed keys, run as a process against a domain
/// whose program left a `layers.plist` beside its file (written here with the same format code).
struct ExplainCLITests {
    /// An application domain `App` under `dir`, its user file holding `user`, a defaults file
    /// and an override file, and the manifest naming them, the rename and the prefix `APP`.
    func makeDomain(in dir: TemporaryDirectory, user: PlistDictionary) throws -> (settings: String, defaults: String, overrides: String) {
        let appDirectory = dir.url.appending(path: "App")
        try FileManager.default.createDirectory(at: appDirectory, withIntermediateDirectories: true)
        let settings = appDirectory.appending(path: "settings.plist").path
        try PlistValue.dictionary(user).write(to: URL(filePath: settings))
        let defaults = dir.path("Defaults.plist")
        try PlistValue.dictionary(["Network": ["timeout": 30], "retries": 3]).write(to: URL(filePath: defaults))
        let overrides = dir.path("Overrides.plist")
        try PlistValue.dictionary(["retries": 9]).write(to: URL(filePath: overrides))
        var manifest = PlistLayersManifest()
        manifest.defaultsFiles = [defaults]
        manifest.overrideFiles = [overrides]
        manifest.renames = [.init(key: "Network/timeout", formerly: ["timeout"])]
        manifest.environmentPrefix = "APP"
        try manifest.write(beside: settings)
        return (settings, defaults, overrides)
    }

    @Test func explainListsEveryLayerTopToBottomAndMarksTheWinner() throws {
        let dir = try TemporaryDirectory()
        let files = try makeDomain(in: dir, user: ["retries": 5])
        let out = try CLI.run(["explain", "App", "retries"], environment: ["XDG_CONFIG_HOME": dir.url.path])
        #expect(out.status == 0)
        #expect(out.stderr.isEmpty)
        #expect(maskingTimes(out.stdout) == """
            retries = 9 (from overrides: \(files.overrides))
              volatile   environment variable APP_RETRIES: not set
            * overrides  \(files.overrides): 9
              user       \(files.settings): 5 (changed on disk (edited by hand, or by a program that records no provenance), seen at TIME)
              defaults   \(files.defaults): 3

            """)
    }

    @Test func anEnvironmentVariableWinsAndJSONSaysSo() throws {
        let dir = try TemporaryDirectory()
        _ = try makeDomain(in: dir, user: [:])
        let out = try CLI.run(["explain", "--json", "App", "Network/timeout"],
                              environment: ["XDG_CONFIG_HOME": dir.url.path, "APP_NETWORK__TIMEOUT": "4"])
        #expect(out.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        #expect(json["key"] as? String == "Network/timeout")
        #expect(json["value"] as? String == "4")
        #expect(json["source"] as? String == "environment variable APP_NETWORK__TIMEOUT")
        let rows = try #require(json["rows"] as? [[String: Any]])
        #expect(rows.map { $0["layer"] as? String } == ["volatile", "overrides", "user", "defaults"])
        #expect(rows.map { $0["wins"] as? Bool } == [true, false, false, false])
        #expect(json["formerly"] as? [String] == ["timeout"])
    }

    @Test func aValueUnderAnOldNameIsFoundAndAnOldNameIsExplainedAsTheNewKey() throws {
        let dir = try TemporaryDirectory()
        let files = try makeDomain(in: dir, user: ["timeout": 12])
        let out = try CLI.run(["explain", "App", "timeout"], environment: ["XDG_CONFIG_HOME": dir.url.path])
        #expect(out.status == 0)
        #expect(out.stderr == "settings: 'timeout' was renamed to 'Network/timeout'; explaining 'Network/timeout'\n")
        #expect(out.stdout.hasPrefix("Network/timeout = 12 (from user: \(files.settings))\n"))
        #expect(out.stdout.contains("* user       \(files.settings): 12 (under its old name 'timeout'; the program moves it at its next save)"))
        #expect(out.stdout.hasSuffix("renamed: formerly 'timeout'; read under those names when 'Network/timeout' is absent\n"))
    }

    @Test func readAnswersForARenamedKeyAndSaysSo() throws {
        let dir = try TemporaryDirectory()
        _ = try makeDomain(in: dir, user: ["Network": ["timeout": 60]])
        let old = try CLI.run(["read", "App", "timeout"], environment: ["XDG_CONFIG_HOME": dir.url.path])
        #expect(old.status == 0)
        #expect(old.stdout == "60\n")
        #expect(old.stderr == "settings: 'timeout' was renamed to 'Network/timeout'; this is the value of 'Network/timeout'\n")

        let notMoved = try TemporaryDirectory()
        _ = try makeDomain(in: notMoved, user: ["timeout": 12])
        let new = try CLI.run(["read", "App", "Network/timeout"], environment: ["XDG_CONFIG_HOME": notMoved.url.path])
        #expect(new.status == 0)
        #expect(new.stdout == "12\n")
        #expect(new.stderr.contains("still stored under its old name 'timeout'"))
    }

    @Test func secretsAreRedactedUnlessAskedFor() throws {
        let dir = try TemporaryDirectory()
        _ = try makeDomain(in: dir, user: ["apiToken": "s3cret"])
        let env = ["XDG_CONFIG_HOME": dir.url.path]
        let hidden = try CLI.run(["explain", "App", "apiToken"], environment: env)
        #expect(!hidden.stdout.contains("s3cret"))
        #expect(hidden.stdout.hasPrefix("apiToken = <redacted> (from user:"))
        let hiddenJSON = try CLI.run(["explain", "--json", "App", "apiToken"], environment: env)
        #expect(!hiddenJSON.stdout.contains("s3cret"))
        let shown = try CLI.run(["explain", "--show-secrets", "App", "apiToken"], environment: env)
        #expect(shown.stdout.hasPrefix("apiToken = s3cret (from user:"))
    }

    /// The provenance of a value the test wrote itself, times masked.
    static let byHand = " (changed on disk (edited by hand, or by a program that records no provenance), seen at TIME)"

    @Test func withoutAManifestOnlyTheUserFileIsShown() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("plain.plist", "<plist><dict><key>a</key><integer>1</integer></dict></plist>").path
        let out = try CLI.run("explain", file, "a")
        #expect(out.status == 0)
        #expect(maskingTimes(out.stdout) == "a = 1 (from user: \(file))\n* user  \(file): 1\(Self.byHand)\n")
        let missing = try CLI.run("explain", file, "b")
        #expect(missing.status == 0)
        #expect(missing.stdout.hasPrefix("b: no value in any layer"))
        #expect(try CLI.run("explain", file).status == 2)
    }
}
