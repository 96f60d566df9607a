import Foundation
import Testing
import SettingsTestSupport

extension CLI {
    /// Runs the tool with an environment (for domains resolved by application name).
    static func run(environment: [String: String], _ arguments: String...) throws -> Output {
        try run(arguments, environment: environment)
    }
}

struct DomainCLITests {
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
        var processes: [Process] = []
        for i in 0..<8 {
            let p = Process()
            p.executableURL = CLI.executable
            p.arguments = ["write", file, "key\(i)", "\(i)"]
            try p.run()
            processes.append(p)
        }
        for p in processes { p.waitUntilExit() }
        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        let keys = try CLI.run("keys", file).stdout.split(separator: "\n").map(String.init)
        #expect(Set(keys) == Set((0..<8).map { "key\($0)" }))
    }

    @Test func printJSONAndConvertJSON() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("d.plist")
        _ = try CLI.run("write", file, "a", "1")
        _ = try CLI.run("write", file, "b", "-array", "x")
        #expect(try CLI.run("print", "--json", file).stdout == "{\n  \"a\": 1,\n  \"b\": [\n    \"x\"\n  ]\n}\n")
        let out = dir.path("d.json")
        #expect(try CLI.run("convert", "json", file, "-o", out).status == 0)
        #expect(String(decoding: try Data(contentsOf: URL(filePath: out)), as: UTF8.self) == #"{"a":1,"b":["x"]}"# + "\n")
        _ = try CLI.run("write", file, "when", "-date", "2026-11-23T10:00:00Z")
        let refused = try CLI.run("print", "--json", file)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("key 'when': date has no JSON form"))
    }

    @Test func lintReportsEachFileWithItsPosition() throws {
        let dir = try TemporaryDirectory()
        let good = try dir.write("good.plist", "<plist><dict/></plist>").path
        let bad = try dir.write("bad.plist", "<plist><dict>\n<key>a</key>\n<integr>1</integr></dict></plist>").path
        let result = try CLI.run("lint", good, bad)
        #expect(result.status == 1)
        #expect(result.stdout == "\(good): OK\n")
        #expect(result.stderr.hasPrefix("\(bad):3:1: "))
        #expect(try CLI.run("lint", good).status == 0)
    }

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
}
