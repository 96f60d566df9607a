import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif
import SettingsTestSupport

extension CLI {
    /// Runs the tool as an unprivileged user (through `setpriv` when the tests run as root, where
    /// permission bits do not apply), so "permission denied" can happen.
    static func runUnprivileged(_ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        guard geteuid() == 0 else { return try run(arguments, environment: environment) }
        return try launch(URL(filePath: "/usr/bin/setpriv"),
                          ["--reuid=65534", "--regid=65534", "--clear-groups", executable.path] + arguments,
                          environment: environment)
    }
}

/// Issue 12, "the tool must never damage or hide the user's data": one test per finding.
struct SafetyCLITests {
    static let malformed = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict>
        \t<key>port</key>
        \t<integr>80</integr>
        </dict>
        </plist>

        """

    // MARK: 1. A malformed domain file is refused, left where and as it was, nothing quarantined

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

    @Test func writesThroughASymbolicLinkKeepTheLinkAndChangeItsTarget() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.url.appending(path: "dotfiles"), withIntermediateDirectories: true)
        let target = try dir.write("dotfiles/settings.plist", "<plist><dict/></plist>").path
        let link = dir.path("link.plist")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try CLI.run("write", link, "k", "1").status == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try CLI.run("read", target, "k").stdout == "1\n")
    }

    // MARK: 2. A value that does not parse exits 1; plain words stay text

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

    // MARK: 3. Every rewrite keeps the file's mode and owner

    @Test(arguments: [
        ["convert", "binary1", "FILE"], ["convert", "xml1", "FILE"], ["convert", "json", "FILE"],
        ["write", "FILE", "k", "2"], ["delete", "FILE", "k"], ["insert", "n", "-integer", "1", "FILE"],
        ["replace", "k", "-string", "x", "FILE"], ["-remove", "k", "FILE"],
    ])
    func rewritesKeepPermissionsAndOwner(command: [String]) throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("m.plist", "<plist><dict><key>k</key><integer>1</integer></dict></plist>").path
        #expect(chmod(file, 0o640) == 0)
        let owned = geteuid() == 0
        if owned { #expect(chown(file, 65534, 65534) == 0) }
        let out = try CLI.run(command.map { $0 == "FILE" ? file : $0 }, environment: [:])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try dir.permissions(of: dir.file("m.plist")) == 0o640)
        if owned {
            var s = stat()
            #expect(stat(file, &s) == 0)
            #expect(s.st_uid == 65534 && s.st_gid == 65534)
        }
        #expect(try dir.listing().filter { $0 != ".m.plist.lock" } == ["m.plist"])  // no temporary file left
    }

    @Test func exportOverAnExistingFileKeepsItsMode() throws {
        let dir = try TemporaryDirectory()
        let domain = dir.path("d.plist")
        #expect(try CLI.run("write", domain, "k", "1").status == 0)
        let target = try dir.write("backup.plist", "old").path
        #expect(chmod(target, 0o600) == 0)
        #expect(try CLI.run("export", domain, target).status == 0)
        #expect(try dir.permissions(of: dir.file("backup.plist")) == 0o600)
    }

    // MARK: 4. One clear line naming the real cause

    @Test func permissionDeniedIsReportedAsPermissionDenied() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.url.appending(path: "MyApp"), withIntermediateDirectories: true)
        let file = try dir.write("MyApp/settings.plist", "<plist><dict/></plist>").path
        #expect(chmod(file, 0o000) == 0)
        let env = ["XDG_CONFIG_HOME": dir.url.path]
        for arguments in [["read", "MyApp"], ["write", "MyApp", "k", "1"], ["keys", "MyApp"]] {
            let out = try CLI.runUnprivileged(arguments, environment: env)
            #expect(out.status == 1)
            #expect(out.stderr == "settings: \(file): cannot read file: permission denied\n")
        }
    }

    @Test func aDirectoryGivenAsAFileIsNamedAsSuch() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.url.appending(path: "sub"), withIntermediateDirectories: true)
        let sub = dir.path("sub")
        for arguments in [["read", sub], ["convert", "xml1", sub], ["print", sub], ["lint", sub]] {
            let out = try CLI.run(arguments, environment: [:])
            #expect(out.status == 1)
            #expect(out.stderr.hasSuffix("\(sub): cannot read file: it is a directory, not a file\n"))
            #expect(!out.stderr.contains("CocoaError"))
        }
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

    // MARK: 5. diff shows type-only changes, prints arrays on one line, and knows files

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
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["diff", "a.bplist", "b.json"]
        process.currentDirectoryURL = dir.url
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(text == "~ k: 1 -> 2\n")
        let same = Process()
        same.executableURL = CLI.executable
        same.arguments = ["diff", "plainname", "a.bplist"]
        same.currentDirectoryURL = dir.url
        try same.run()
        same.waitUntilExit()
        #expect(same.terminationStatus == 0)
    }

    // MARK: 6. lint warns about dates and data plistlib rejects; --strict fails on them

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
