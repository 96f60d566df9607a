import Foundation
import Testing
import SettingsTestSupport

/// One test per row of the `defaults`/`plutil` table in Docs/Tool.md, each running the built tool.
struct ParityCLITests {
    /// A fresh config directory holding the domain `MyApp` with a few keys.
    struct Fixture {
        let dir: TemporaryDirectory
        var env: [String: String] { ["XDG_CONFIG_HOME": dir.url.path] }
        var file: String { dir.path("MyApp/settings.plist") }

        init() throws {
            dir = try TemporaryDirectory()
            try FileManager.default.createDirectory(at: dir.url.appending(path: "MyApp"), withIntermediateDirectories: true)
            _ = try dir.write("MyApp/settings.plist", """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>name</key>
                \t<string>Ada L</string>
                \t<key>port</key>
                \t<integer>8080</integer>
                \t<key>tags</key>
                \t<array>
                \t\t<string>a</string>
                \t</array>
                \t<key>Net</key>
                \t<dict>
                \t\t<key>host</key>
                \t\t<string>example.com</string>
                \t</dict>
                </dict>
                </plist>

                """).path
        }

        func run(_ arguments: String...) throws -> CLI.Output {
            try run(arguments)
        }

        func run(_ arguments: [String]) throws -> CLI.Output {
            try CLI.run(arguments, environment: env)
        }
    }

    // MARK: defaults

    @Test func readDomain() throws {
        let f = try Fixture()
        let out = try f.run("read", "MyApp")
        #expect(out.status == 0)
        #expect(out.stdout == """
            {
                name = "Ada L";
                port = 8080;
                tags = (
                    a
                );
                Net = {
                    host = example.com;
                };
            }

            """)
    }

    @Test func readKey() throws {
        let f = try Fixture()
        #expect(try f.run("read", "MyApp", "name").stdout == "Ada L\n")
        #expect(try f.run("read", "MyApp", "Net/host").stdout == "example.com\n")
    }

    @Test func readType() throws {
        let f = try Fixture()
        #expect(try f.run("read-type", "MyApp", "port").stdout == "Type is integer\n")
        #expect(try f.run("read-type", "MyApp", "Net").stdout == "Type is dictionary\n")
        #expect(try f.run("read-type", "MyApp", "nope").status == 1)
    }

    @Test func writeUntypedValue() throws {
        let f = try Fixture()
        #expect(try f.run("write", "MyApp", "on", "YES").status == 0)
        #expect(try f.run("write", "MyApp", "motto", "plain text").status == 0)
        #expect(try f.run("read-type", "MyApp", "on").stdout == "Type is boolean\n")
        #expect(try f.run("read", "MyApp", "motto").stdout == "plain text\n")
    }

    @Test(arguments: [("-string", "42", "string"), ("-int", "7", "integer"), ("-float", "1.5", "float"),
                      ("-bool", "NO", "boolean"), ("-date", "2026-11-23T10:00:00Z", "date"), ("-data", "0fbd", "data")])
    func writeTypedValue(flag: String, value: String, type: String) throws {
        let f = try Fixture()
        #expect(try f.run("write", "MyApp", "k", flag, value).status == 0)
        #expect(try f.run("read-type", "MyApp", "k").stdout == "Type is \(type)\n")
    }

    @Test func writeArray() throws {
        let f = try Fixture()
        #expect(try f.run("write", "MyApp", "tags", "-array", "x", "y").status == 0)
        #expect(try f.run("read", "MyApp", "tags").stdout == "(\n    x,\n    y\n)\n")
    }

    @Test func writeArrayAdd() throws {
        let f = try Fixture()
        #expect(try f.run("write", "MyApp", "tags", "-array-add", "b", "c").status == 0)
        #expect(try f.run("read", "MyApp", "tags").stdout == "(\n    a,\n    b,\n    c\n)\n")
        #expect(try f.run("write", "MyApp", "fresh", "-array-add", "z").status == 0)
        #expect(try f.run("read", "MyApp", "fresh").stdout == "(\n    z\n)\n")
        let refused = try f.run("write", "MyApp", "port", "-array-add", "z")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("key 'port' holds an integer, not an array"))
    }

    @Test func writeDict() throws {
        let f = try Fixture()
        #expect(try f.run("write", "MyApp", "Net", "-dict", "host", "h", "port", "1").status == 0)
        #expect(try f.run("read", "MyApp", "Net").stdout == "{\n    host = h;\n    port = 1;\n}\n")
    }

    @Test func writeDictAdd() throws {
        let f = try Fixture()
        #expect(try f.run("write", "MyApp", "Net", "-dict-add", "port", "1").status == 0)
        #expect(try f.run("read", "MyApp", "Net").stdout == "{\n    host = example.com;\n    port = 1;\n}\n")
    }

    @Test func writeWholeDomain() throws {
        let f = try Fixture()
        #expect(try f.run("write", "MyApp", "{ only = 1; }").status == 0)
        #expect(try f.run("keys", "MyApp").stdout == "only\n")
    }

    @Test func deleteKeyAndDomain() throws {
        let f = try Fixture()
        #expect(try f.run("delete", "MyApp", "Net/host").status == 0)
        #expect(try f.run("read", "MyApp", "Net").stdout == "{\n}\n")
        #expect(try f.run("delete", "MyApp").status == 0)
        #expect(try f.run("keys", "MyApp").stdout == "")
    }

    @Test func rename() throws {
        let f = try Fixture()
        #expect(try f.run("rename", "MyApp", "port", "Net/port").status == 0)
        #expect(try f.run("read", "MyApp", "Net/port").stdout == "8080\n")
        #expect(try f.run("read", "MyApp", "port").status == 1)
        #expect(try f.run("rename", "MyApp", "nope", "x").status == 1)
    }

    @Test func domains() throws {
        let f = try Fixture()
        #expect(try f.run("write", "Other", "k", "1").status == 0)
        try FileManager.default.createDirectory(at: f.dir.url.appending(path: "NotADomain"), withIntermediateDirectories: true)
        #expect(try f.run("domains").stdout == "MyApp, Other\n")
    }

    @Test func find() throws {
        let f = try Fixture()
        let out = try f.run("find", "EXAMPLE")
        #expect(out.status == 0)
        #expect(out.stdout == "Found 1 keys in domain 'MyApp': {\n    Net = {\n        host = example.com;\n    };\n}\n")
        #expect(try f.run("find", "zzz").stdout == "No domain, key, nor value containing 'zzz'\n")
    }

    @Test func importFromFileAndStandardInput() throws {
        let f = try Fixture()
        let json = try f.dir.write("in.json", #"{"imported": [1, 2]}"#).path
        #expect(try f.run("import", "MyApp", json).status == 0)
        #expect(try f.run("keys", "MyApp").stdout == "imported\n")
        #expect(try f.run("read-type", "MyApp", "imported").stdout == "Type is array\n")
    }

    @Test func exportToFileAndStandardOutput() throws {
        let f = try Fixture()
        let out = f.dir.path("out.plist")
        #expect(try f.run("export", "MyApp", out).status == 0)
        #expect(try Data(contentsOf: URL(filePath: out)) == Data(contentsOf: URL(filePath: f.file)))
        #expect(try f.run("export", "MyApp", "-").stdout == String(decoding: try Data(contentsOf: URL(filePath: f.file)), as: UTF8.self))
    }

    // MARK: plutil

    @Test func humanReadablePrint() throws {
        let f = try Fixture()
        let expected = """
            {
              "name" => "Ada L"
              "port" => 8080
              "tags" => [
                0 => "a"
              ]
              "Net" => {
                "host" => "example.com"
              }
            }

            """
        #expect(try f.run("-p", f.file).stdout == expected)
        #expect(try f.run("print", "-p", f.file).stdout == expected)
    }

    /// Reals print as plutil -p prints them: a whole one with its `.0`, a negative zero with its
    /// sign (issue 31, item 7: `30` and `0` before); `-extract raw` keeps the sign too (`-0`).
    @Test func humanReadablePrintOfReals() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("r.plist", """
            <plist><dict><key>whole</key><real>30</real><key>zero</key><real>-0.0</real>\
            <key>half</key><real>1.5</real><key>big</key><real>1e20</real><key>n</key><integer>30</integer></dict></plist>
            """).path
        #expect(try CLI.run("-p", file).stdout == """
            {
              "whole" => 30.0
              "zero" => -0.0
              "half" => 1.5
              "big" => 1e+20
              "n" => 30
            }

            """)
        #expect(try CLI.run("-extract", "zero", "raw", file).stdout == "-0\n")
        #expect(try CLI.run("-extract", "whole", "raw", file).stdout == "30\n")
        #expect(try CLI.run("-convert", "json", "-o", "-", file).stdout == #"{"whole":30.0,"zero":-0.0,"half":1.5,"big":1e+20,"n":30}"# + "\n")
    }

    @Test func lintAndSilentLint() throws {
        let f = try Fixture()
        #expect(try f.run("-lint", f.file).stdout == "\(f.file): OK\n")
        let silent = try f.run("-lint", "-s", f.file)
        #expect(silent.status == 0)
        #expect(silent.stdout.isEmpty)
        #expect(try f.run("-s", "-lint", f.file).stdout.isEmpty)
    }

    @Test func convertInPlace() throws {
        let f = try Fixture()
        #expect(try f.run("-convert", "binary1", f.file).status == 0)
        #expect(try Data(contentsOf: URL(filePath: f.file)).prefix(8) == Data("bplist00".utf8))
        #expect(try f.run("-convert", "xml1", f.file).status == 0)
        #expect(try f.run("read", "MyApp", "port").stdout == "8080\n")
    }

    @Test func convertJSONCompactAndReadable() throws {
        let f = try Fixture()
        #expect(try f.run("-convert", "json", "-o", "-", f.file).stdout
                == #"{"name":"Ada L","port":8080,"tags":["a"],"Net":{"host":"example.com"}}"# + "\n")
        #expect(try f.run("-convert", "json", "-r", "-o", "-", f.file).stdout.hasPrefix("{\n  \"name\": \"Ada L\",\n"))
    }

    @Test func convertToOutputFileOrStandardOutput() throws {
        let f = try Fixture()
        let out = f.dir.path("copy.bplist")
        #expect(try f.run("-convert", "binary1", f.file, "-o", out).status == 0)
        #expect(try Data(contentsOf: URL(filePath: out)).prefix(6) == Data("bplist".utf8))
        #expect(try f.run("-convert", "xml1", "-o", "-", out).stdout.hasPrefix("<?xml"))
    }

    @Test func convertWithExtension() throws {
        let f = try Fixture()
        #expect(try f.run("-convert", "json", "-e", "json", f.file).status == 0)
        #expect(FileManager.default.fileExists(atPath: f.dir.path("MyApp/settings.json")))
        #expect(try f.run("-convert", "xml1", "-e", "back.plist", f.dir.path("MyApp/settings.json")).status == 0)
        #expect(try f.run("diff", f.file, f.dir.path("MyApp/settings.back.plist")).status == 0)
    }

    @Test func extractInAFormat() throws {
        let f = try Fixture()
        #expect(try f.run("-extract", "Net", "json", f.file).stdout == #"{"host":"example.com"}"# + "\n")
        #expect(try f.run("-extract", "tags", "xml1", "-o", "-", f.file).stdout.contains("<array>\n\t<string>a</string>\n</array>"))
        #expect(try f.run("-extract", "Net.nope", "json", f.file).status == 1)
    }

    @Test func extractRaw() throws {
        let f = try Fixture()
        #expect(try f.run("-extract", "Net.host", "raw", f.file).stdout == "example.com\n")
        #expect(try f.run("-extract", "tags.0", "raw", "-n", f.file).stdout == "a")
        #expect(try f.run("-extract", "port", "raw", "-expect", "integer", f.file).stdout == "8080\n")
        #expect(try f.run("-extract", "port", "raw", "-expect", "string", f.file).status == 1)
    }

    @Test func typeOfKeyPath() throws {
        let f = try Fixture()
        #expect(try f.run("-type", "tags", f.file).stdout == "array\n")
        #expect(try f.run("-type", "tags.0", f.file).stdout == "string\n")
        #expect(try f.run("type", "Net", f.file).stdout == "dictionary\n")
    }

    @Test func insert() throws {
        let f = try Fixture()
        #expect(try f.run("-insert", "Net.port", "-integer", "443", f.file).status == 0)
        #expect(try f.run("-insert", "tags.0", "-string", "first", f.file).status == 0)
        #expect(try f.run("-insert", "blob", "-data", "AAEC", f.file).status == 0)
        #expect(try f.run("-insert", "obj", "-json", #"{"a": [1, true]}"#, f.file).status == 0)
        let again = try f.run("-insert", "Net.port", "-integer", "1", f.file)
        #expect(again.status == 1)
        #expect(again.stderr.contains("a value already exists at key path 'Net.port'"))
        #expect(try f.run("read", "MyApp", "Net/port").stdout == "443\n")
        #expect(try f.run("-extract", "tags", "json", f.file).stdout == #"["first","a"]"# + "\n")
        #expect(try f.run("-extract", "obj", "json", f.file).stdout == #"{"a":[1,true]}"# + "\n")
        #expect(try f.run("read", "MyApp", "blob").stdout == "<000102>\n")
    }

    @Test func insertAppend() throws {
        let f = try Fixture()
        #expect(try f.run("-insert", "tags", "-string", "z", "-append", f.file).status == 0)
        #expect(try f.run("-extract", "tags", "json", f.file).stdout == #"["a","z"]"# + "\n")
    }

    @Test func replace() throws {
        let f = try Fixture()
        #expect(try f.run("-replace", "port", "-string", "eighty", f.file).status == 0)
        #expect(try f.run("-replace", "new", "-bool", "YES", f.file).status == 0)
        #expect(try f.run("read-type", "MyApp", "port").stdout == "Type is string\n")
        #expect(try f.run("read-type", "MyApp", "new").stdout == "Type is boolean\n")
    }

    @Test func remove() throws {
        let f = try Fixture()
        #expect(try f.run("-remove", "tags.0", f.file).status == 0)
        #expect(try f.run("-remove", "Net.host", f.file).status == 0)
        #expect(try f.run("-extract", "tags", "json", f.file).stdout == "[]\n")
        #expect(try f.run("-remove", "Net.host", f.file).status == 1)
    }

    @Test func editsWriteElsewhereWithOutput() throws {
        let f = try Fixture()
        let before = try Data(contentsOf: URL(filePath: f.file))
        let out = try f.run("-replace", "port", "-integer", "1", "-o", "-", f.file)
        #expect(out.stdout.contains("<integer>1</integer>"))
        #expect(try Data(contentsOf: URL(filePath: f.file)) == before)
    }

    // MARK: Input syntaxes

    @Test func everyCommandReadsJSONAndOpenStepText() throws {
        let f = try Fixture()
        let json = try f.dir.write("a.json", try f.run("-convert", "json", "-o", "-", f.file).stdout).path
        let xml = f.dir.path("from-json.plist")
        #expect(try f.run("convert", "xml1", json, "-o", xml).status == 0)  // the tool's own JSON output
        #expect(try f.run("diff", f.file, xml).status == 0)
        let openStep = try f.dir.write("a.txt", try f.run("read", "MyApp").stdout).path
        #expect(try f.run("-extract", "Net.host", "raw", openStep).stdout == "example.com\n")
        #expect(try f.run("-lint", openStep).status == 0)
        let typed = try f.dir.write("t.json", try f.run("print", "--typed-json", f.file).stdout).path
        #expect(try f.run("diff", f.file, typed).status == 0)
    }

    @Test func keysListsKeyPaths() throws {
        let f = try Fixture()
        #expect(try f.run("keys", "MyApp").stdout == "name\nport\ntags\nNet/host\n")
    }

    // MARK: plutil parity (the toolchain's plutil does each of these)

    @Test func silentAndNoNewlineAreTakenByEveryVerb() throws {
        let f = try Fixture()
        for arguments in [["-lint", "-s", f.file], ["-lint", "-n", f.file], ["-p", "-s", f.file], ["-type", "tags", "-s", f.file],
                          ["-convert", "xml1", "-n", "-o", "-", f.file], ["-extract", "tags", "json", "-s", f.file],
                          ["-remove", "port", "-n", "-o", "-", f.file]] {
            #expect(try f.run(arguments).status == 0, "\(arguments)")
        }
        #expect(try f.run("-lint", "-s", f.file).stdout.isEmpty)
        #expect(try f.run("-type", "tags", "-n", f.file).stdout == "array")
    }

    @Test func appendToAMissingKeyInsertsTheValueThere() throws {
        let f = try Fixture()
        #expect(try f.run("-insert", "new", "-string", "v", "-append", f.file).status == 0)
        #expect(try f.run("-extract", "new", "raw", f.file).stdout == "v\n")
        #expect(try f.run("-insert", "tags", "-string", "x", "-append", f.file).status == 0)
        #expect(try f.run("-extract", "tags", "json", f.file).stdout.hasSuffix("\"x\"]\n"))
    }

    @Test func createWritesAnEmptyDictionary() throws {
        let f = try Fixture()
        let xml = f.dir.path("c.plist"), binary = f.dir.path("c.bplist")
        #expect(try f.run("-create", "xml1", xml).status == 0)
        #expect(try String(contentsOfFile: xml, encoding: .utf8).contains("<dict/>"))
        #expect(try f.run("create", "binary1", binary).status == 0)
        #expect(try f.run("print", "--typed-json", binary).stdout == #"{"dict": []}"# + "\n")
        #expect(try f.run("-create", "json", "-").stdout == "{}")
        #expect(try f.run("-create", "yaml", xml).status == 2)
    }
}
