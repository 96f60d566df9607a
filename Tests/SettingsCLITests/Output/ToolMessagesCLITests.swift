import Foundation
import Testing
import SettingsTestSupport

/// What the tool says when something goes wrong: one message per problem, exit statuses that
/// mean one thing, suggestions for a key path that finds nothing, no silent replacement, and no
/// secret confirmed.
struct ToolMessagesCLITests {
    let sample = """
        <plist><dict><key>Network</key><dict><key>timeout</key><integer>30</integer></dict>\
        <key>tags</key><array><string>a</string><string>b</string><string>c</string></array>\
        <key>fullName</key><string>Ada</string><key>autoPlay</key><true/></dict></plist>
        """

    @Test func aMissingFileGetsOneMessageFromEveryCommand() throws {
        let dir = try TemporaryDirectory()
        var messages: Set<String> = []
        for arguments in [["read", "./nofile.plist"], ["read", "./nofile.plist", "k"], ["print", "./nofile.plist"],
                          ["lint", "./nofile.plist"], ["keys", "./nofile.plist"]] {
            let out = try CLI.run(arguments, environment: [:], in: dir.url)
            #expect(out.status == 1, "\(arguments)")
            // lint reports each file as FILE: problem, without the tool's name in front.
            messages.insert(out.stderr.hasPrefix("settings: ") ? String(out.stderr.dropFirst("settings: ".count)) : out.stderr)
        }
        #expect(messages == ["./nofile.plist: cannot read file: no such file\n"])
    }

    @Test func diffExitsTwoWhenItCannotRead() throws {
        let dir = try TemporaryDirectory()
        let a = try dir.write("a.plist", sample).path
        let b = try dir.write("b.plist", sample.replacingOccurrences(of: "30", with: "60")).path
        #expect(try CLI.run("diff", a, a).status == 0)
        #expect(try CLI.run("diff", a, b).status == 1)
        let missing = try CLI.run("diff", a, dir.path("none.plist"))
        #expect(missing.status == 2)
        #expect(missing.stderr == "settings: \(dir.path("none.plist")): cannot read file: no such file\n")
        let malformed = try dir.write("bad.plist", "<plist><dict>").path
        #expect(try CLI.run("diff", malformed, a).status == 2)
        #expect(try CLI.run("diff", "--help").stdout.contains("2 when a file cannot be read"))
    }

    @Test func aKeyPathThatFindsNothingSuggestsTheNearestOrTheOtherSyntax() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("p.plist", sample).path
        let slashInExtract = try CLI.run("-extract", "Network/timeout", "raw", file)
        #expect(slashInExtract.status == 1)
        #expect(slashInExtract.stderr.contains("(plutil-style commands take key paths with '.': 'Network.timeout')"))
        let typo = try CLI.run("read", file, "Netwrok/timeout")
        #expect(typo.status == 1)
        #expect(typo.stderr.contains("no value for key 'Netwrok/timeout' (did you mean 'Network/timeout'?)"))
        let dotInRead = try CLI.run("read", file, "Network.timeout")
        #expect(dotInRead.stderr.contains("(this command takes key paths with '/': 'Network/timeout')"))
        let typoInExtract = try CLI.run("-extract", "Network.timeuot", "raw", file)
        #expect(typoInExtract.stderr.contains("(did you mean 'Network.timeout'?)"))
        let nothingNear = try CLI.run("read", file, "unrelated")
        #expect(nothingNear.stderr == "settings: \(file): no value for key 'unrelated'\n")
        let removeTypo = try CLI.run("-remove", "tagz", file)
        #expect(removeTypo.stderr.contains("(did you mean 'tags'?)"))
    }

    @Test func renameOntoAnExistingKeyNeedsForce() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("p.plist", sample).path
        let before = try Data(contentsOf: URL(filePath: file))
        let refused = try CLI.run("rename", file, "fullName", "autoPlay")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("key 'autoPlay' already holds a bool; not changed (--force replaces it)"))
        #expect(try Data(contentsOf: URL(filePath: file)) == before)
        #expect(try CLI.run("rename", "--force", file, "fullName", "autoPlay").status == 0)
        #expect(try CLI.run("read", file, "autoPlay").stdout == "Ada\n")
        #expect(try CLI.run("read", file, "fullName").status == 1)
        #expect(try CLI.run("rename", file, "autoPlay", "name").status == 0)
    }

    @Test func findNeitherPrintsNorConfirmsSecrets() throws {
        let dir = try TemporaryDirectory()
        let config = dir.path("config")
        let env = ["XDG_CONFIG_HOME": config]
        #expect(try CLI.run(["write", "Demo", "password", "hunter2"], environment: env).status == 0)
        #expect(try CLI.run(["write", "Demo", "user", "ada"], environment: env).status == 0)
        let find = try CLI.run(["find", "hunter2"], environment: env)
        #expect(find.stdout == "No domain, key, nor value containing 'hunter2'\n")  // before: password = hunter2
        let byKey = try CLI.run(["find", "password"], environment: env)
        #expect(byKey.stdout.contains("<redacted>") && !byKey.stdout.contains("hunter2"))
        #expect(try CLI.run(["find", "hunter2", "--show-secrets"], environment: env).stdout.contains("hunter2"))
    }

    @Test func extractRawOfAnArrayOrDictionaryIsLikePlutil() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("p.plist", sample).path
        #expect(try CLI.run("-extract", "tags", "raw", file).stdout == "3\n")
        #expect(try CLI.run("-extract", "Network", "raw", file).stdout == "timeout\n")
        #expect(try CLI.run("-extract", "Network", "raw", "-n", file).stdout == "timeout")
    }

    /// A value the plutil forms cannot read for its type names the file and the key path, for
    /// every type flag (issue 31, item 7: `insert: "maybe" is not a valid -bool value` named neither).
    @Test(arguments: [("-bool", "maybe"), ("-integer", "x"), ("-float", "x"), ("-date", "x"), ("-data", "!!"),
                      ("-json", "{"), ("-xml", "<bogus")])
    func aTypedValueThatDoesNotParseNamesTheFileAndKey(flag: String, value: String) throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("a.plist", sample).path
        for verb in ["-insert", "-replace"] {
            let out = try CLI.run(verb, "flag", flag, value, file)
            #expect(out.status == 1)
            #expect(out.stderr.hasPrefix("settings: \(file): \(verb.dropFirst()) at key path 'flag': "), "\(out.stderr)")
            #expect(out.stderr.contains(flag == "-integer" ? "-int" : flag), "\(out.stderr)")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == sample)
    }

    /// An index past an array's end says so and gives the array's count, for each verb.
    @Test func anIndexPastAnArraysEndIsOutOfBounds() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("a.plist", sample).path
        let said = "no value at key path 'tags.9' (index 9 is out of bounds: the array at 'tags' has 3 elements)"
        for arguments in [["-insert", "tags.9", "-string", "z"], ["-replace", "tags.9", "-string", "z"], ["-remove", "tags.9"],
                          ["-extract", "tags.9", "raw"], ["-type", "tags.9"]] {
            let out = try CLI.run(arguments + [file], environment: [:])
            #expect(out.status == 1, "\(arguments)")
            #expect(out.stderr == "settings: \(file): \(said)\n", "\(arguments)")
        }
        // An index that is there, or one past the end for -insert (it appends), still works.
        #expect(try CLI.run("-insert", "tags.3", "-string", "d", file).status == 0)
        #expect(try CLI.run("-extract", "tags.3", "raw", file).stdout == "d\n")
    }
}
