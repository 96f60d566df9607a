import Foundation
import Testing
import SettingsTestSupport

/// The tool refuses arguments and files it cannot act on faithfully: domains that would write
/// outside the application's folder, arguments that are not UTF-8, and binary files whose keys
/// no text can hold.
struct InputChecksCLITests {
    @Test(arguments: [".", ".."])
    func dotDomainsAreRefusedAndWriteNothing(domain: String) throws {
        let dir = try TemporaryDirectory()
        let config = dir.path("config/sub")
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        let out = try CLI.run(["write", domain, "k", "v"], environment: ["XDG_CONFIG_HOME": config])
        #expect(out.status == 2)
        #expect(out.stderr.contains("DOMAIN '\(domain)' is not an application name"))
        // Before: "." wrote $XDG_CONFIG_HOME/settings.plist and ".." the folder above it.
        #expect(!FileManager.default.fileExists(atPath: config + "/settings.plist"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("config/settings.plist")))
        #expect(try CLI.run(["read", domain], environment: ["XDG_CONFIG_HOME": config]).status == 2)
    }

    @Test(arguments: ["sub/", "sub/.", "sub/..", "./sub"])
    func domainsWithASlashThatAreNotFilesAreRefused(domain: String) throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("sub"), withIntermediateDirectories: true)
        let out = try CLI.run(["write", domain, "k", "v"], environment: [:], in: dir.url)
        if domain == "./sub" {  // could be a file: refused when read, as every command says it
            #expect(out.status == 1)
            #expect(out.stderr == "settings: ./sub: cannot read file: it is a directory, not a file\n")
        } else {
            #expect(out.status == 2)
            #expect(out.stderr.contains("DOMAIN '\(domain)' is a directory, not a settings file or an application name"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("sub")).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("")) == ["sub"])
    }

    /// Runs the tool through `sh` so that an argument can hold bytes that are not UTF-8
    /// (`Process` takes `String`s): `$1` is the tool, `printf` makes the bytes.
    func runRaw(_ script: String, in dir: TemporaryDirectory) throws -> CLI.Output {
        try CLI.launch(URL(filePath: "/bin/sh"), ["-c", script, "sh", CLI.executable.path], environment: [:], in: dir.url)
    }

    @Test func aKeyThatIsNotUTF8IsRefusedAndTouchesNoOtherKey() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("d.plist", "<plist><dict><key>café</key><string>kept</string><key>caf\u{FFFD}</key><integer>1</integer></dict></plist>").path
        let before = try Data(contentsOf: URL(filePath: file))
        // `caf` then the Latin-1 byte of é: CommandLine.arguments reads it as "caf\u{FFFD}".
        for command in [#""$1" delete d.plist "$(printf 'caf\350')""#, #""$1" write d.plist "$(printf 'caf\350')" x"#,
                        #""$1" read d.plist "$(printf 'caf\350')""#, #""$1" write d.plist k "$(printf 'v\377')""#] {
            let out = try runRaw(command, in: dir)
            #expect(out.status == 2, "\(command)")
            #expect(out.stderr.contains("is not valid UTF-8"), "\(command)")
            #expect(out.stderr.contains(#"\xE8"#) || out.stderr.contains(#"\xFF"#), "\(command)")
        }
        #expect(try Data(contentsOf: URL(filePath: file)) == before)
        // Valid UTF-8 still works.
        #expect(try runRaw(#""$1" delete d.plist "$(printf 'caf\303\251')""#, in: dir).status == 0)
        #expect(try CLI.run("print", "--typed-json", file).stdout == #"{"dict": [["caf\#u{FFFD}", {"int": 1}]]}"# + "\n")
    }

    /// `{"a\u{D800}": 1, "a\u{DC00}": 2}` in binary: two keys that are lone UTF-16 surrogates.
    static let loneSurrogateKeys: [UInt8] = {
        var bytes = Array("bplist00".utf8)
        let objects: [[UInt8]] = [[0xD2, 1, 2, 3, 4], [0x62, 0, 0x61, 0xD8, 0], [0x62, 0, 0x61, 0xDC, 0], [0x10, 1], [0x10, 2]]
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = UInt8(bytes.count)
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)] + [UInt8](repeating: 0, count: 8)
        bytes += [0, 0, 0, 0, 0, 0, 0, table]
        return bytes
    }()

    @Test func loneSurrogateKeysAreReportedNotMerged() throws {
        let dir = try TemporaryDirectory()
        let file = dir.path("s.bplist")
        try Data(Self.loneSurrogateKeys).write(to: URL(filePath: file))
        // Before: lint said OK and -convert wrote one key "a\u{FFFD}" = 1, dropping the 2.
        let lint = try CLI.run("lint", file)
        #expect(lint.status == 1)
        #expect(lint.stderr.contains("lone surrogate (0xD800, unit 1)") || lint.stdout.contains("lone surrogate (0xD800, unit 1)"))
        let convert = try CLI.run("-convert", "xml1", file)
        #expect(convert.status == 1)
        #expect(convert.stderr.contains("\(file)") && convert.stderr.contains("lone surrogate"))
        #expect(try Data(contentsOf: URL(filePath: file)) == Data(Self.loneSurrogateKeys))
    }
}
