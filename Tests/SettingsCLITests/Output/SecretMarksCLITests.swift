import Foundation
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Testing

/// `read` and `explain` redact by every secret mark the tool can see: the key printed as well as
/// the key typed (a renamed key), and `x-secret` in the schema beside the file; and a domain's
/// generations, which keep old secrets, can be purged.
struct SecretMarksCLITests {
    /// An application domain `App` holding `contents`, with a manifest naming `key` as the old
    /// name of `apiKey`, and a schema marking `pin` (a name that does not look secret) `x-secret`.
    func domain(in dir: TemporaryDirectory, contents: PlistDictionary) throws -> [String: String] {
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        #expect(try CLI.run(environment: environment, "write", "App", "seed", "1").status == 0)
        let file = dir.path("App/settings.plist")
        try PlistValue.dictionary(contents).write(to: URL(filePath: file))
        var manifest = PlistLayersManifest()
        manifest.renames = [.init(key: "apiKey", formerly: ["key"])]
        try manifest.write(beside: file)
        try Data(#"{"type": "object", "properties": {"pin": {"type": "integer", "x-secret": true}, "Vault": {"type": "object", "x-secret": true}}}"#.utf8)
            .write(to: dir.url.appending(path: "App/.settings.plist.meta/schema.json"))
        return environment
    }

    @Test func readingAnOldNameRedactsByTheKeyPrinted() throws {
        let dir = try TemporaryDirectory()
        let environment = try domain(in: dir, contents: ["apiKey": "sk-live-1"])
        let out = try CLI.run(environment: environment, "read", "App", "key")
        #expect(out.status == 0)
        #expect(out.stdout == "<redacted>\n")
        #expect(out.stderr.contains("was renamed to 'apiKey'"))
        #expect(try CLI.run(environment: environment, "read", "--show-secrets", "App", "key").stdout == "sk-live-1\n")
        let explained = try CLI.run(environment: environment, "explain", "App", "key")
        #expect(!explained.output.contains("sk-live-1"), "\(explained.output)")
        // Not moved yet: the value under the old name is the new key's, secret too.
        let unmoved = try TemporaryDirectory()
        let env2 = try domain(in: unmoved, contents: ["key": "sk-live-2"])
        #expect(try CLI.run(environment: env2, "read", "App", "apiKey").stdout == "<redacted>\n")
        let explainedUnmoved = try CLI.run(environment: env2, "explain", "App", "apiKey")
        #expect(!explainedUnmoved.output.contains("sk-live-2"), "\(explainedUnmoved.output)")
        let json = try CLI.run(environment: env2, "explain", "App", "apiKey", "--json")
        #expect(!json.output.contains("sk-live-2"), "\(json.output)")
    }

    @Test func readAndExplainRedactWhatTheSchemaMarksSecret() throws {
        let dir = try TemporaryDirectory()
        let environment = try domain(in: dir, contents: ["pin": 4711, "Vault": ["door": "0451"], "host": "example.com"])
        #expect(try CLI.run(environment: environment, "read", "App", "pin").stdout == "<redacted>\n")
        #expect(try CLI.run(environment: environment, "read", "App", "Vault/door").stdout == "<redacted>\n")
        let whole = try CLI.run(environment: environment, "read", "App")
        #expect(whole.status == 0)
        #expect(!whole.stdout.contains("4711") && !whole.stdout.contains("0451"), "\(whole.stdout)")
        #expect(whole.stdout.contains("example.com"))
        for arguments in [["explain", "App", "pin"], ["explain", "App", "pin", "--json"], ["explain", "App", "Vault"]] {
            let out = try CLI.run(arguments, environment: environment)
            #expect(out.status == 0)
            #expect(!out.output.contains("4711") && !out.output.contains("0451"), "\(arguments): \(out.output)")
        }
        #expect(try CLI.run(environment: environment, "read", "--show-secrets", "App", "pin").stdout == "4711\n")
        // find neither matches nor prints them.
        #expect(try CLI.run(environment: environment, "find", "4711").stdout.hasPrefix("No domain"))
        let found = try CLI.run(environment: environment, "find", "pin")
        #expect(found.stdout.contains("pin = \"<redacted>\""), "\(found.stdout)")
    }

    @Test func historyPurgeRemovesEveryGenerationAndTheSecretsInThem() throws {
        let dir = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.url.path]
        for token in ["t-old-1", "t-old-2", "t-new"] {
            #expect(try CLI.run(environment: environment, "write", "App", "apiToken", token).status == 0)
        }
        let file = dir.url.appending(path: "App/settings.plist").path
        #expect(try PlistHistory.list(for: file).count == 3)
        let purged = try CLI.run(environment: environment, "history", "--purge", "App")
        #expect(purged.status == 0)
        #expect(purged.stdout.hasSuffix("removed 3 generations\n"), "\(purged.stdout)")
        #expect(try PlistHistory.list(for: file).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: PlistHistory.journal(for: file)))  // the secrets' bytes are gone
        #expect(try CLI.run(environment: environment, "history", "App").stdout.contains("no history kept yet"))
        #expect(try CLI.run(environment: environment, "read", "--show-secrets", "App", "apiToken").stdout == "t-new\n")
    }
}
