import Foundation
import Testing
import SettingsPlist
import SettingsTestSupport

/// The commands on domains (`read`, `write`, `delete`, `rename`, `keys`, `domains`, `find`, `import`, `export`).
struct DomainCommandsTests {
    static let malformed = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict>
        \t<key>port</key>
        \t<integr>80</integr>
        </dict>
        </plist>

        """

    @Test func writeThenReadKeysAndNamespaces() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        #expect(try CLI.run("write", file, "autoPlay", "YES").status == 0)
        #expect(try CLI.run("write", file, "Network/timeout", "30").status == 0)
        #expect(try CLI.run("write", file, "name", "\"Ada L\"").status == 0)
        #expect(try CLI.run("write", file, "tags", "-array", "a", "b").status == 0)
        #expect(try CLI.run("write", file, "ratio", "-float", "1.5").status == 0)
        #expect(try CLI.run("write", file, "blob", "-data", "0fbd7777").status == 0)
        #expect(try CLI.run("write", file, "server", "{ host = example.com; port = 8080; }").status == 0)
        let whole = try CLI.run("read", file)
        #expect(whole.status == 0)
        #expect(whole.stdout.contains("Network = {\n        timeout = 30;\n    };"))
        #expect(try CLI.run("read", file, "name").stdout == "Ada L\n")
        #expect(try CLI.run("read", file, "Network/timeout").stdout == "30\n")
        #expect(try CLI.run("read", file, "server/port").stdout == "8080\n")
        #expect(try CLI.run("read", file, "blob").stdout == "<0fbd7777>\n")
        #expect(try CLI.run("keys", file).stdout == "autoPlay\nNetwork/timeout\nname\ntags\nratio\nblob\nserver/host\nserver/port\n")
        // The file is a real plist with typed values.
        let json = try CLI.run("print", "--typed-json", file).stdout
        #expect(json.contains(#"["autoPlay", {"bool": true}]"#))
        #expect(json.contains(#"["ratio", {"real": 1.5}]"#))
    }

    /// A bare number is typed only when it prints back as the user typed it (issue 31, item 5):
    /// a zip code keeps its leading zero, a phone number its plus, `1.0` its point.
    @Test(arguments: [("01234", PlistValue.string("01234")), ("+15551234", .string("+15551234")), ("1.0", .string("1.0")),
                      ("1e3", .string("1e3")), ("42", .integer(42)), ("-7", .integer(-7)), ("1.5", .real(1.5)),
                      ("YES", .bool(true)), ("no", .bool(false))])
    func aBareValueIsTypedOnlyWhenItReadsBackAsTyped(text: String, expected: PlistValue) throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        let written = try CLI.run("write", file, "k", text)
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try PlistValue(contentsOf: URL(filePath: file))["k"] == expected)
    }

    @Test func domainsByApplicationNameLiveInTheConfigDirectory() throws {
        let dir = try TemporaryDirectory()
        let env = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: env, "write", "MyApp", "volume", "-float", "0.5").status == 0)
        #expect(FileManager.default.fileExists(atPath: dir.path("MyApp/settings.plist")))
        #expect(try CLI.run(environment: env, "read", "MyApp", "volume").stdout == "0.5\n")
    }

    @Test func missingDomainsAndKeysExitOneNamingFileAndKey() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        let missingDomain = try CLI.run("read", file)
        #expect(missingDomain.status == 1)
        #expect(missingDomain.stderr.contains(file))
        _ = try CLI.run("write", file, "a", "1")
        let missingKey = try CLI.run("read", file, "Network/proxy")
        #expect(missingKey.status == 1)
        #expect(missingKey.stderr == "settings: \(file): no value for key 'Network/proxy'\n")
        #expect(try CLI.run("delete", file, "nope").status == 1)
        #expect(try CLI.run("write", file, "n", "-int", "x").status == 1)
        #expect(try CLI.run("write", file, "n", "-int").status == 2)
        #expect(try CLI.run("write", file).status == 2)
    }

    @Test func deleteRemovesAKeyOrEveryKey() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        _ = try CLI.run("write", file, "a", "1")
        _ = try CLI.run("write", file, "Net/b", "2")
        #expect(try CLI.run("delete", file, "Net/b").status == 0)
        #expect(try CLI.run("keys", file).stdout == "a\nNet\n")
        #expect(try CLI.run("delete", file).status == 0)
        #expect(try CLI.run("keys", file).stdout == "")
    }

    @Test func importReplacesAndExportWrites() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        _ = try CLI.run("write", file, "old", "1")
        let source = try dir.write("in.plist", """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>new</key><string>x</string></dict></plist>
            """).path
        #expect(try CLI.run("import", file, source).status == 0)
        #expect(try CLI.run("keys", file).stdout == "new\n")
        let out = dir.path("out.plist")
        #expect(try CLI.run("export", file, out).status == 0)
        #expect(try CLI.run("print", "--typed-json", out).stdout == #"{"dict": [["new", {"string": "x"}]]}"# + "\n")
        #expect(try CLI.run("export", file, "-").stdout.hasPrefix("<?xml"))
    }

    @Test func concurrentWritersLoseNothing() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("shared.plist")
        let writers = try (0..<8).map { i in try RunningProgram(CLI.executable, ["write", file, "key\(i)", "\(i)"]) }
        let ends = writers.map { $0.finish() }
        #expect(ends.allSatisfy { $0.status == 0 }, "\(ends.map(\.stderr))")
        let keys = try CLI.run("keys", file).stdout.split(separator: "\n").map(String.init)
        #expect(Set(keys) == Set((0..<8).map { "key\($0)" }))
    }

    @Test(arguments: [
        ["write", "port", "8080"], ["write", "port", "-int", "8080"], ["write", "tags", "-array-add", "x"],
        ["delete", "port"], ["delete"], ["rename", "port", "p"], ["import", "IMPORT"],
    ])
    func editsOfAMalformedDomainFileAreRefusedAndTheFileIsLeftAlone(command: [String]) throws {
        let dir = try TemporaryDirectory()
        let env = ["XDG_CONFIG_HOME": dir.url.path]
        try FileManager.default.createDirectory(at: dir.url.appending(path: "App"), withIntermediateDirectories: true)
        let file = try dir.write("App/settings.plist", Self.malformed).path
        let source = try dir.write("in.plist", "<plist><dict><key>a</key><true/></dict></plist>").path
        let before = try dir.listing("App")
        let arguments = [command[0], "App"] + command.dropFirst().map { $0 == "IMPORT" ? source : $0 }
        let out = try CLI.run(arguments, environment: env)
        #expect(out.status == 1)
        #expect(out.stderr == "settings: \(file):5:2: unknown element <integr>\n")  // one line, file:line:column
        #expect(try dir.bytes("App/settings.plist") == Data(Self.malformed.utf8))
        #expect(try dir.listing("App") == before)  // no .corrupt-*, nothing left beside it
        // It is still there, and still reported as malformed, not as missing.
        let read = try CLI.run(["read", "App"], environment: env)
        #expect(read.status == 1)
        #expect(read.stderr == "settings: \(file):5:2: unknown element <integr>\n")
    }

    @Test func aFileWhoseRootIsNotADictionaryIsRefusedTooSayingWhatItIs() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("a.plist", "<plist><array><string>x</string></array></plist>").path
        let out = try CLI.run("write", file, "k", "1")
        #expect(out.status == 1)
        #expect(out.stderr == "settings: \(file): the root is an array, expected a dictionary\n")
        #expect(try dir.bytes("a.plist") == Data("<plist><array><string>x</string></array></plist>".utf8))
    }

    @Test func aKeyPathThroughAValueThatIsNotADictionaryIsRefused() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        #expect(try CLI.run("write", file, "name", "Ada").status == 0)
        let before = try dir.bytes("d.plist")
        let out = try CLI.run("write", file, "name/first", "x")
        #expect(out.status == 1)
        #expect(out.stderr == "settings: \(file): key 'name' holds a string, not a dictionary; not changed\n")
        #expect(try dir.bytes("d.plist") == before)
    }

    @Test(arguments: ["{ a = 1; ", "( a, b", "<0fz>", "\"unterminated", "{ a = 1; } extra"])
    func malformedValuesExitOneAndWriteNothing(value: String) throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        #expect(try CLI.run("write", file, "other", "1").status == 0)
        let before = try dir.bytes("d.plist")
        let out = try CLI.run("write", file, "k", value)
        #expect(out.status == 1)
        #expect(out.stderr.hasPrefix("settings: \(file): key 'k': the value does not parse: line 1:"))
        #expect(out.stderr.filter { $0 == "\n" }.count == 1)
        #expect(try dir.bytes("d.plist") == before)
    }

    @Test(arguments: ["hello world", "word", "a=b", "x }", "https://example.com/a?b=c"])
    func textThatIsNotALiteralIsStoredAsItIs(value: String) throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        #expect(try CLI.run("write", file, "k", value).status == 0)
        #expect(try CLI.run("read-type", file, "k").stdout == "Type is string\n")
        #expect(try CLI.run("read", file, "k").stdout == value + "\n")
    }
}
