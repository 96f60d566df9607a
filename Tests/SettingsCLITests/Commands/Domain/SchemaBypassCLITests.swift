import Foundation
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Testing

/// The schema check of `write` and every other edit cannot be walked around (an old name, a
/// secret that already breaks it), and does not refuse a change for a problem the file already had.
struct SchemaBypassCLITests {
    /// An application domain `App` with `schema` beside its file, `contents` in it, and a
    /// manifest naming `timeout` as the old name of `Network/timeout`.
    func domain(in dir: TemporaryDirectory, schema: String, contents: PlistDictionary) throws -> [String: String] {
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: environment, "write", "App", "seed", "1").status == 0)
        let file = dir.path("App/settings.plist")
        try PlistValue.dictionary(contents).write(to: URL(filePath: file))
        try Data(schema.utf8).write(to: dir.url.appending(path: "App/.settings.plist.meta/schema.json"))
        var manifest = PlistLayersManifest()
        manifest.renames = [.init(key: "Network/timeout", formerly: ["timeout"])]
        try manifest.write(beside: file)
        return environment
    }

    @Test func aValueWrittenUnderAnOldNameIsCheckedAsTheKeyItBecomes() throws {
        let dir = try TemporaryDirectory()
        let environment = try domain(in: dir, schema: SchemaCLITests.schema, contents: [:])
        let file = dir.path("App/settings.plist")
        let refused = try CLI.run(environment: environment, "write", "App", "timeout", "500")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("key 'Network/timeout': 500 does not fit \"maximum\": 120.0"), "\(refused.stderr)")
        let replaced = try CLI.run(["replace", "timeout", "-integer", "500", file], environment: environment)
        #expect(replaced.status == 1, "\(replaced.output)")
        #expect(try PlistValue(contentsOf: URL(filePath: file)) == [:])
        #expect(try CLI.run(environment: environment, "write", "App", "timeout", "60").status == 0)
        // The key's own value wins over the old name's, so an old name is free when it is set.
        #expect(try CLI.run(environment: environment, "write", "App", "Network/timeout", "30").status == 0)
        #expect(try CLI.run(environment: environment, "delete", "App", "timeout").status == 0)
    }

    @Test func aSecretThatAlreadyBreaksTheSchemaStillRefusesAnotherBreakingValue() throws {
        let schema = #"{"type": "object", "properties": {"apiToken": {"type": "string", "enum": ["t-good", "t-other"]}}}"#
        let dir = try TemporaryDirectory()
        let environment = try domain(in: dir, schema: schema, contents: ["apiToken": "t-bad-1"])
        let refused = try CLI.run(environment: environment, "write", "App", "apiToken", "t-bad-2")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("key 'apiToken': <redacted> does not fit"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("t-bad"))
        #expect(try CLI.run(environment: environment, "read", "--show-secrets", "App", "apiToken").stdout == "t-bad-1\n")
        // An unrelated change is not blocked by the secret's old problem, and a fitting value is taken.
        #expect(try CLI.run(environment: environment, "write", "App", "other", "1").status == 0)
        #expect(try CLI.run(environment: environment, "write", "App", "apiToken", "t-good").status == 0)
    }

    @Test func aRequiredKeyTheFileAlreadyLackedDoesNotBlockUnrelatedChanges() throws {
        let schema = #"{"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}"#
        let dir = try TemporaryDirectory()
        let environment = try domain(in: dir, schema: schema, contents: ["a": 1, "c": 3])
        #expect(try CLI.run(environment: environment, "write", "App", "b", "2").status == 0)
        #expect(try CLI.run(environment: environment, "delete", "App", "a").status == 0)
        #expect(try CLI.run(environment: environment, "reset", "App").status == 0)
        // A new problem still blocks: removing the required key once it is there.
        #expect(try CLI.run(environment: environment, "write", "App", "name", "x").status == 0)
        let removed = try CLI.run(environment: environment, "delete", "App", "name")
        #expect(removed.status == 1)
        #expect(removed.stderr.contains("\"required\""), "\(removed.stderr)")
    }
}
