import Foundation
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The commands on plist files (`print`, `convert`, `lint`, `extract`, `type`, `create`, the edits).
struct FileCommandsTests {
    let sample = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>name</key>
        \t<string>Ada &amp; co</string>
        \t<key>count</key>
        \t<integer>-3</integer>
        \t<key>on</key>
        \t<true/>
        </dict>
        </plist>

        """

    @Test func printsTypedJSON() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("a.plist", sample).path
        let out = try CLI.run("print", "--typed-json", file)
        #expect(out.status == 0)
        #expect(out.stdout == #"{"dict": [["name", {"string": "Ada & co"}], ["count", {"int": -3}], ["on", {"bool": true}]]}"# + "\n")
        #expect(out.stderr.isEmpty)
    }

    @Test func malformedFileExitsOneWithOneLineNamingFileAndPosition() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("bad.plist", "<plist><dict>\n<key>a</key>\n<integr>1</integr></dict></plist>").path
        let out = try CLI.run("print", "--typed-json", file)
        #expect(out.status == 1)
        #expect(out.stdout.isEmpty)
        #expect(out.stderr.hasPrefix("settings: \(file):3:"))
        #expect(out.stderr.filter { $0 == "\n" }.count == 1)
    }

    @Test func missingFileExitsOne() throws {
        let out = try CLI.run("print", "--typed-json", "/nonexistent/x.plist")
        #expect(out.status == 1)
        #expect(out.stderr == "settings: /nonexistent/x.plist: cannot read file: no such file\n")
    }

    @Test func convertsBetweenFormatsAndBack() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("a.plist", sample).path
        let binary = dir.path("a.bplist"), xml = dir.path("b.plist")
        #expect(try CLI.run("convert", "binary1", file, "-o", binary).status == 0)
        #expect(try Data(contentsOf: URL(filePath: binary)).prefix(8) == Data("bplist00".utf8))
        #expect(try CLI.run("convert", "xml1", binary, "-o", xml).status == 0)
        #expect(try String(contentsOfFile: xml, encoding: .utf8) == sample)
    }

    @Test func convertsTypedJSONInput() throws {
        let dir = try TemporaryDirectory()
        let json = try dir.write("v.json", #"{"dict": [["big", {"int": 18446744073709551615}]]}"#).path
        let out = dir.path("v.plist")
        #expect(try CLI.run("convert", "xml", json, "-o", out).status == 0)
        #expect(try CLI.run("print", "--typed-json", out).stdout == #"{"dict": [["big", {"int": 18446744073709551615}]]}"# + "\n")
    }

    @Test func convertWithoutOutputReplacesTheInput() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("a.plist", sample).path
        #expect(try CLI.run("convert", "binary1", file).status == 0)
        #expect(try Data(contentsOf: URL(filePath: file)).prefix(6) == Data("bplist".utf8))
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

    @Test func convertToDashWritesStandardOutput() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("a.plist", "<plist><dict><key>k</key><integer>1</integer></dict></plist>").path
        let original = try dir.bytes("a.plist")
        let out = try CLI.run(["convert", "json", "a.plist", "-o", "-"], environment: [:], in: dir.url)
        #expect(out.status == 0)
        #expect(out.stdout == "{\"k\":1}\n")
        #expect(try dir.listing() == ["a.plist"])  // no file named '-'
        _ = file
        #expect(try dir.bytes("a.plist") == original)
    }

    @Test func rootTypesAreNamedWithTheRightArticle() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("a.plist", "<plist><array/></plist>").path
        #expect(try CLI.run("read", file).stderr == "settings: \(file): the root is an array, expected a dictionary\n")
        let int = try dir.write("i.plist", "<plist><integer>1</integer></plist>").path
        #expect(try CLI.run("keys", int).stderr == "settings: \(int): the root is an integer, expected a dictionary\n")
    }

    @Test func lintWarnsAboutLenientDatesAndDataAndStrictFails() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("w.plist", """
            <plist><dict>
            <key>d</key><date>2024-13-45T00:00:00Z</date>
            <key>b</key><data>!!!notbase64</data>
            <key>ok</key><data>AAEC</data>
            </dict></plist>
            """).path
        let lenient = try CLI.run("lint", file)
        #expect(lenient.status == 0)
        #expect(lenient.stdout == "\(file): OK\n")
        let warnings = lenient.stderr.split(separator: "\n")
        #expect(warnings.count == 2)
        #expect(warnings.first?.hasPrefix("\(file):2:19: warning: <date>2024-13-45T00:00:00Z</date> is not a valid date") == true)
        #expect(warnings.last?.hasPrefix("\(file):3:19: warning: <data> is not valid base64") == true)
        let strict = try CLI.run("lint", "--strict", file)
        #expect(strict.status == 1)
        #expect(strict.stdout.isEmpty)
        #expect(strict.stderr.contains("\(file):2:19: error: "))
        // Still read as CoreFoundation reads them.
        #expect(try CLI.run("print", "--typed-json", file).status == 0)
    }
}
