import Foundation
import Testing
import SettingsTestSupport

/// Runs the built `settings` binary as a subprocess.
struct CLI {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `settings` executable beside the test bundle (SwiftPM builds every product for `swift test`),
    /// or `$SETTINGS_CLI` (to run the tests against another build, e.g. an older one).
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["SETTINGS_CLI"], !path.isEmpty { return URL(filePath: path) }
        var dir = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On Apple platforms the test runner sits inside the .xctest bundle.
        while dir.path.contains(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appending(path: "settings")
    }

    static func run(_ arguments: String...) throws -> Output {
        try run(arguments, environment: [:])
    }

    static func run(_ arguments: [String], environment: [String: String], in directory: URL? = nil) throws -> Output {
        try launch(executable, arguments, environment: environment, in: directory)
    }

    /// Runs `program` with `arguments` and the test's environment plus `environment`; returns
    /// its status and both outputs.
    static func launch(_ program: URL, _ arguments: [String], environment: [String: String], in directory: URL? = nil) throws -> Output {
        let process = Process()
        if let directory { process.currentDirectoryURL = directory }
        process.executableURL = program
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }
}

struct CLITests {
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

    @Test(arguments: [["print"], ["convert", "xml9", "x"], ["frobnicate"], ["print", "--bogus", "x"], []])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
    }

    @Test(arguments: ["read", "read-type", "write", "delete", "rename", "keys", "domains", "find", "import", "export",
                      "print", "convert", "lint", "extract", "type", "insert", "replace", "remove", "create", "diff"])
    func everyCommandHasHelp(command: String) throws {
        let out = try CLI.run(command, "--help")
        #expect(out.status == 0)
        #expect(out.stdout.hasPrefix("usage: settings \(command)"))
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
}
