import Foundation
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Synchronization
import Testing

/// The `plutil`-style verbs on a file the Settings library manages (an application's file, or one
/// with the library's lock file or companion directory beside it) change it as `write` does:
/// under the lock, from its contents then, checked against its schema, kept in its history.
struct ManagedFileVerbsCLITests {
    @Test func replaceBesideAConcurrentWriterLosesNoAcknowledgedKey() throws {
        let dir = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: environment, "write", "App", "seed", "0").status == 0)
        let file = dir.path("App/settings.plist")
        let rounds = 40
        // Each command either is acknowledged (exit 0) or refuses because the other held the lock
        // past the tool's bound (possible on a machine loaded enough): nothing else.
        let acknowledged = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { side in
            for i in 0..<rounds {
                let key = side == 0 ? "w\(i)" : "r\(i)"
                let arguments = side == 0 ? ["write", "App", key, "\(i)"] : ["replace", key, "-integer", "\(i)", file]
                let out = try? CLI.run(arguments, environment: environment)
                if out?.status == 0 {
                    acknowledged.withLock { $0.append(key) }
                } else if out?.status != 1 || out?.stderr.contains("held the lock") != true {
                    failures.withLock { $0.append("\(arguments.joined(separator: " ")): \(out?.output ?? "did not run")") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let keys = acknowledged.withLock { $0 }
        #expect(keys.count > rounds, "fewer than half the commands were acknowledged: the test proves little")
        let contents = try #require(try PlistValue(contentsOf: URL(filePath: file)).dictionaryValue)
        let lost = keys.filter { contents[$0] == nil }
        #expect(lost.isEmpty, "lost \(lost.count) acknowledged keys: \(lost)")
    }

    @Test func replaceAndInsertAreCheckedAgainstTheSchemaLikeWrite() throws {
        let dir = try TemporaryDirectory()
        let environment = try SchemaCLITests().appWithSchema(in: dir)
        let file = dir.path("App/settings.plist")
        let before = try Data(contentsOf: URL(filePath: file))
        let replaced = try CLI.run(["replace", "Network.timeout", "-integer", "500", file], environment: environment)
        #expect(replaced.status == 1)
        #expect(replaced.stderr.contains("key 'Network/timeout': 500 does not fit \"maximum\": 120.0"), "\(replaced.stderr)")
        let inserted = try CLI.run(["insert", "theme", "-string", "blue", file], environment: environment)
        #expect(inserted.status == 1)
        #expect(inserted.stderr.contains("\"enum\""), "\(inserted.stderr)")
        #expect(try Data(contentsOf: URL(filePath: file)) == before)
        #expect(try CLI.run(["replace", "Network.timeout", "-integer", "60", file], environment: environment).status == 0)
        #expect(try CLI.run(environment: environment, "read", "App", "Network/timeout").stdout == "60\n")
    }

    @Test func createOnADomainKeepsAGeneration() throws {
        let dir = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: environment, "write", "App", "kept", "here").status == 0)
        let file = dir.path("App/settings.plist")
        let created = try CLI.run(["create", "binary1", file], environment: environment)
        #expect(created.status == 0, "\(created.output)")
        #expect(try CLI.run(environment: environment, "keys", "App").stdout == "")
        #expect(try Data(contentsOf: URL(filePath: file)).starts(with: Array("bplist00".utf8)))
        let history = try CLI.run(environment: environment, "history", "App").stdout.split(separator: "\n")
        #expect(history.count == 2, "\(history)")
        #expect(history.last?.contains("kept") == true)
        #expect(try CLI.run(environment: environment, "restore", "App", "1").status == 0)
        #expect(try CLI.run(environment: environment, "read", "App", "kept").stdout == "here\n")
    }

    @Test func removeAndConvertOnAFileWithACompanionDirectoryKeepHistory() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("prefs.plist")
        try PlistValue.dictionary(["a": 1, "b": 2]).write(to: file)
        try FileManager.default.createDirectory(at: dir.file(".prefs.plist.meta"), withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        #expect(try CLI.run("remove", "a", file.path).status == 0)
        #expect(try CLI.run("convert", "binary1", file.path).status == 0)
        #expect(try Data(contentsOf: file).starts(with: Array("bplist00".utf8)))
        #expect(try PlistValue(contentsOf: file) == ["b": 2])
        #expect(try PlistHistory.list(for: file.path).count == 3)  // the file as found (never recorded), the remove, the conversion
        let json = try CLI.run("convert", "json", file.path)
        #expect(json.status == 1)
        #expect(json.stderr.contains("must stay a property list"))
        // A plain file stays a plain file: nothing is created beside it.
        let plain = dir.file("plain.plist")
        try PlistValue.dictionary(["a": 1]).write(to: plain)
        #expect(try CLI.run("replace", "a", "-integer", "2", plain.path).status == 0)
        #expect(try dir.listing().filter { $0.contains("plain") } == ["plain.plist"])
    }
}
