import Foundation
import SettingsTestSupport
import Testing

/// `settings schema`, `settings lint --schema` and `settings write` against the schema an
/// application wrote beside its settings file (`.settings.plist.meta/schema.json`).
struct SchemaCLITests {
    /// What `SettingsSchema(of:).jsonText()` writes for a small settings type.
    static let schema = """
        {
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "title": "AppSettings",
          "type": "object",
          "properties": {
            "Network": {
              "type": "object",
              "properties": {
                "timeout": {"type": "number", "default": 30.0, "minimum": 1.0, "maximum": 120.0, "x-swift-type": "Double"}
              }
            },
            "theme": {"type": "string", "default": "light", "enum": ["light", "dark"]},
            "apiToken": {"type": "string", "x-secret": true}
          }
        }

        """

    /// An application domain `App` in `dir` with the schema beside its file; returns the environment.
    func appWithSchema(in dir: TemporaryDirectory) throws -> [String: String] {
        let env = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: env, "write", "App", "Network/timeout", "30").status == 0)
        let meta = dir.url.appending(path: "App/.settings.plist.meta")
        try FileManager.default.createDirectory(at: meta, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])  // the write above made it (history)
        try Data(Self.schema.utf8).write(to: meta.appending(path: "schema.json"))
        return env
    }

    @Test func schemaHasHelp() throws {
        let out = try CLI.run("schema", "--help")
        #expect(out.status == 0)
        #expect(out.stdout.hasPrefix("usage: settings schema [--markdown] DOMAIN"))
        #expect(try CLI.run("--help").stdout.contains("  schema    print the JSON Schema"))
    }

    @Test func schemaMarkdownPrintsAReferenceTable() throws {
        let dir = try TemporaryDirectory()
        let env = try appWithSchema(in: dir)
        let out = try CLI.run(["schema", "--markdown", "App"], environment: env)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == """
            # AppSettings

            | Key | Title | Type | Default | Description |
            |---|---|---|---|---|
            | `theme` |  | string | `light` | One of: `light`, `dark`. |
            | `apiToken` |  | string |  |  |
            | `Network/timeout` |  | number | `30` | From `1` to `120`. |

            """)
    }

    @Test func schemaPrintsWhatTheApplicationWrote() throws {
        let dir = try TemporaryDirectory()
        let env = try appWithSchema(in: dir)
        let out = try CLI.run(environment: env, "schema", "App")
        #expect(out.status == 0)
        #expect(out.stdout == Self.schema)
        let none = try CLI.run(environment: env, "schema", "Other")
        #expect(none.status == 1)
        #expect(none.stderr.contains("no schema"))
    }

    @Test func writeRefusesAValueThatDoesNotFitNamingKeyValueAndRule() throws {
        let dir = try TemporaryDirectory()
        let env = try appWithSchema(in: dir)
        let file = dir.path("App/settings.plist")
        let before = try Data(contentsOf: URL(filePath: file))
        let tooLong = try CLI.run(environment: env, "write", "App", "Network/timeout", "500")
        #expect(tooLong.status == 1)
        #expect(tooLong.stderr.contains("key 'Network/timeout': 500 does not fit \"maximum\": 120.0"))
        #expect(tooLong.stderr.hasSuffix("; not changed\n"))
        let blue = try CLI.run(environment: env, "write", "App", "theme", "blue")
        #expect(blue.status == 1)
        #expect(blue.stderr.contains("key 'theme': \"blue\" does not fit \"enum\": [\"light\", \"dark\"]"))
        let secret = try CLI.run(environment: env, "write", "App", "apiToken", "-int", "12345")
        #expect(secret.status == 1)
        #expect(secret.stderr.contains("key 'apiToken': <redacted> does not fit \"type\": \"string\""))
        #expect(!secret.stderr.contains("12345"))
        let replaced = try CLI.run(environment: env, "write", "App", "{ theme = blue; }")
        #expect(replaced.status == 1)
        #expect(try Data(contentsOf: URL(filePath: file)) == before)

        #expect(try CLI.run(environment: env, "write", "App", "theme", "dark").status == 0)
        #expect(try CLI.run(environment: env, "write", "App", "Network/timeout", "-float", "90").status == 0)
        #expect(try CLI.run(environment: env, "read", "App", "Network/timeout").stdout == "90\n")
    }

    @Test func aBareNumberIsKeptAsTextWhereTheSchemaWantsText() throws {
        let dir = try TemporaryDirectory()
        let env = try appWithSchema(in: dir)
        #expect(try CLI.run(environment: env, "write", "App", "apiToken", "12345").status == 0)
        #expect(try CLI.run(environment: env, "read-type", "App", "apiToken").stdout == "Type is string\n")
        // Where the schema says nothing, a bare number is still a number.
        #expect(try CLI.run(environment: env, "write", "App", "count", "3").status == 0)
        #expect(try CLI.run(environment: env, "read-type", "App", "count").stdout == "Type is integer\n")
    }

    @Test func aProblemAlreadyInTheFileDoesNotBlockAnUnrelatedWrite() throws {
        let dir = try TemporaryDirectory()
        let env = try appWithSchema(in: dir)
        // Written before the schema existed (another version of the program, say).
        try FileManager.default.removeItem(atPath: dir.path("App/.settings.plist.meta/schema.json"))
        #expect(try CLI.run(environment: env, "write", "App", "theme", "blue").status == 0)
        try Data(Self.schema.utf8).write(to: dir.url.appending(path: "App/.settings.plist.meta/schema.json"))
        #expect(try CLI.run(environment: env, "write", "App", "Network/timeout", "60").status == 0)
        #expect(try CLI.run(environment: env, "write", "App", "theme", "green").status == 1)
    }

    @Test func lintWithSchemaReportsEveryValueThatDoesNotFit() throws {
        let dir = try TemporaryDirectory()
        let schema = try dir.write("schema.json", Self.schema).path
        let good = try dir.write("good.plist", """
            <plist version="1.0"><dict><key>theme</key><string>dark</string>
            <key>Network</key><dict><key>timeout</key><integer>5</integer></dict><key>other</key><true/></dict></plist>
            """).path
        let bad = try dir.write("bad.json", #"{"theme": "blue", "Network": {"timeout": 0}}"#).path
        let out = try CLI.run("lint", "--schema", schema, good, bad)
        #expect(out.status == 1)
        #expect(out.stdout == "\(good): OK\n")
        #expect(out.stderr == """
            \(bad): key 'theme': "blue" does not fit "enum": ["light", "dark"]
            \(bad): key 'Network/timeout': 0 does not fit "minimum": 1.0

            """)
        #expect(try CLI.run("lint", "--schema", schema, good).status == 0)
    }

    @Test func aSchemaWithAKeywordTheCheckerDoesNotImplementIsRefused() throws {
        let dir = try TemporaryDirectory()
        let schema = try dir.write("schema.json", #"{"properties": {"name": {"type": "string", "pattern": "^a"}}}"#).path
        let file = try dir.write("a.plist", "{ name = b; }").path
        let out = try CLI.run("lint", "--schema", schema, file)
        #expect(out.status == 1)
        #expect(out.stderr == "settings: \(schema): schema at /properties/name/pattern: the keyword 'pattern' is not supported (supported: additionalProperties, const, contentEncoding, enum, exclusiveMaximum, exclusiveMinimum, format, items, maximum, minimum, properties, required, type, annotations and x- keywords)\n")
        let notJSON = try dir.write("broken.json", "{").path
        #expect(try CLI.run("lint", "--schema", notJSON, file).status == 1)
    }
}
