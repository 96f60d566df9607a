import Foundation
import Settings
import SettingsFiles
import SettingsPlist
import SettingsTestSupport
import Testing

enum SchemaTheme: String, CaseIterable, SettingsValue, Sendable { case light, dark }

struct SchemaNetwork: SettingsGroup {
    let store: SettingsStore
    @Setting var proxy: String?
    @Setting var retries: Int

    init(store: SettingsStore) {
        self.store = store
        _proxy = Setting("Network/proxy", store: store)
        _retries = Setting("Network/retries", default: 3, store: store, rules: .clamp(0...10))
    }
}

struct SchemaAppSettings {
    @Setting var autoPlay: Bool
    @Setting var timeout: Double
    @Setting var theme: SchemaTheme
    @Setting var apiToken: String?
    @Setting var lastSeen: Date?
    @Setting var avatar: Data?
    let network: SchemaNetwork

    init(store: SettingsStore) {
        _autoPlay = Setting("autoPlay", default: false, store: store)
        _timeout = Setting("Network/timeout", default: 30.0, store: store, rules: .clamp(1...120))
        _theme = Setting("theme", default: .light, store: store)
        _apiToken = Setting("apiToken", store: store)
        _lastSeen = Setting("lastSeen", store: store)
        _avatar = Setting("avatar", store: store)
        network = SchemaNetwork(store: store)
    }
}

/// Runs Python's `jsonschema` (draft 2020-12) as a process: the reference validator.
enum PythonJSONSchema {
    static let script = """
        import json, sys
        from jsonschema import Draft202012Validator
        schema = json.load(open(sys.argv[1]))
        Draft202012Validator.check_schema(schema)
        errors = list(Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
        for e in errors: print("/".join(str(p) for p in e.absolute_path) + ": " + e.message)
        sys.exit(1 if errors else 0)
        """

    /// `python3` with `jsonschema` importable (`.ci/run` installs `python3-jsonschema`).
    static let isAvailable: Bool = (try? run(["-c", "import jsonschema"]).status) == 0

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try launch(URL(filePath: "/usr/bin/env"), ["python3"] + arguments)
    }

    /// Runs `program` and returns its status and its standard output and error together.
    static func launch(_ program: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let run = try runProgram(program, arguments)
        return (run.status, run.output)
    }

    /// Validates `instance` (converted as `jsonInstanceText()` converts it) against `schema`.
    static func validate(_ instance: PlistValue, against schema: String, in dir: TemporaryDirectory) throws -> (status: Int32, output: String) {
        let schemaFile = dir.file("schema.json"), instanceFile = dir.file("instance.json")
        try Data(schema.utf8).write(to: schemaFile)
        try Data(instance.jsonInstanceText().utf8).write(to: instanceFile)
        return try run(["-c", script, schemaFile.path, instanceFile.path])
    }
}

@Suite("SettingsSchema")
struct SettingsSchemaTests {
    @Test func reflectsEveryKeyWithTypeDefaultRangeCasesAndSecretFlag() throws {
        let schema = SettingsSchema(of: SchemaAppSettings(store: .inMemory()))
        #expect(schema.title == "SchemaAppSettings")
        #expect(schema.keys.map(\.key.path) == [
            "autoPlay", "Network/timeout", "theme", "apiToken", "lastSeen", "avatar", "Network/proxy", "Network/retries",
        ])
        let byPath = Dictionary(uniqueKeysWithValues: schema.keys.map { ($0.key.path, $0) })
        let timeout = try #require(byPath["Network/timeout"])
        #expect(timeout.jsonType == "number")
        #expect(timeout.defaultValue == 30.0)
        #expect(timeout.minimum == 1.0 && timeout.maximum == 120.0)
        #expect(timeout.property == "SchemaAppSettings.timeout")
        #expect(byPath["Network/retries"]?.jsonType == "integer")
        #expect(byPath["Network/retries"]?.minimum == 0 && byPath["Network/retries"]?.maximum == 10)
        #expect(byPath["Network/retries"]?.property == "SchemaAppSettings.network.retries")
        #expect(byPath["theme"]?.allowedValues == ["light", "dark"])
        #expect(byPath["theme"]?.jsonType == "string")
        #expect(byPath["autoPlay"]?.jsonType == "boolean")
        #expect(byPath["apiToken"]?.isSecret == true)
        #expect(byPath["Network/proxy"]?.jsonType == "string")
        #expect(byPath["Network/proxy"]?.defaultValue == nil)
        #expect(byPath["lastSeen"]?.jsonType == "string" && byPath["lastSeen"]?.format == "date-time")
        #expect(byPath["avatar"]?.jsonType == "string" && byPath["avatar"]?.contentEncoding == "base64")
        #expect(schema.keys.allSatisfy { $0.formerNames.isEmpty })
    }

    @Test func namespacesBecomeNestedPropertiesObjects() {
        let document = SettingsSchema(of: SchemaAppSettings(store: .inMemory())).jsonSchema
        #expect(document["$schema"] == "https://json-schema.org/draft/2020-12/schema")
        #expect(document["additionalProperties"] == nil)
        let network = document["properties"]?["Network"]
        #expect(network?["type"] == "object")
        #expect(network?["properties"]?.dictionaryValue?.keys == ["timeout", "proxy", "retries"])
        #expect(network?["properties"]?["timeout"]?["maximum"] == 120.0)
        #expect(document["properties"]?["apiToken"]?["x-secret"] == true)
        #expect(document["properties"]?.dictionaryValue?.keys == ["autoPlay", "Network", "theme", "apiToken", "lastSeen", "avatar"])
    }

    @Test func integerTypesNarrowerThanAPlistIntegerGetTheirRange() {
        struct Widths {
            @Setting("small", default: 1, store: .inMemory()) var small: UInt8
            @Setting("count", default: 1, store: .inMemory()) var count: UInt
            @Setting("plain", default: 1, store: .inMemory()) var plain: Int
            @Setting("level", default: 1, store: .inMemory(), rules: .clamp(-3...3)) var level: Int8
        }
        let keys = SettingsSchema(of: Widths()).keys
        #expect(keys.map(\.minimum) == [0, 0, nil, -3])
        #expect(keys.map(\.maximum) == [255, nil, nil, 3])
    }

    @Test func formerNamesAreListedAsXFormerly() {
        struct Renamed {
            @Setting("Network/timeout", formerly: ["timeout", "NetTimeout"], default: 30, store: .inMemory()) var timeout: Int
            @Setting("plain", default: 1, store: .inMemory()) var plain: Int
        }
        let schema = SettingsSchema(of: Renamed())
        #expect(schema.keys.map(\.formerNames) == [["timeout", "NetTimeout"], []])
        #expect(schema.jsonSchema["properties"]?["Network"]?["properties"]?["timeout"]?["x-formerly"] == ["timeout", "NetTimeout"])
        #expect(schema.jsonSchema["properties"]?["plain"]?["x-formerly"] == nil)
    }

    @Test func secretDefaultsStayOutOfTheSchema() {
        struct Secrets {
            @Setting("Service/token", default: "s3cr3t", store: .inMemory()) var token: String
        }
        let schema = SettingsSchema(of: Secrets())
        #expect(schema.keys.first?.isSecret == true)
        #expect(schema.keys.first?.defaultValue == nil)
        #expect(!((try? schema.jsonText()) ?? "s3cr3t").contains("s3cr3t"))
    }

    @Test func writesSchemaJSONIntoTheCompanionDirectoryOwnerOnly() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let schema = SettingsSchema(of: SchemaAppSettings(store: store))
        let path = try schema.write(for: store)
        #expect(path == dir.url.path + "/.settings.plist.meta/schema.json")
        #expect(try dir.permissions(of: URL(filePath: path)) == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == schema.jsonText())
        #expect(throws: SettingsError.self) { try schema.write(for: .inMemory()) }
        // At first run, before anything was saved, the directory is made as a save would make it.
        let fresh = SettingsStore.file(dir.url.appending(path: "App/settings.plist"), autosaveDelay: nil)
        #expect(try schema.write(for: fresh) == dir.url.path + "/App/.settings.plist.meta/schema.json")
    }

    @Test func storedModelsAreObjectsWithTheirDefault() {
        struct Profile: SettingsModel, Codable, Sendable { var name = "Ada" }
        struct WithModel { @StoredModel("profile", store: .inMemory()) var profile: Profile }
        let key = SettingsSchema(of: WithModel()).keys.first
        #expect(key?.jsonType == "object")
        #expect(key?.defaultValue == ["name": "Ada"])
    }

    @Test func checkerAgreesWithTheStoreOnGoodAndBadValues() async throws {
        let store = SettingsStore.inMemory()
        let settings = SchemaAppSettings(store: store)
        settings.timeout = 45
        settings.theme = .dark
        settings.lastSeen = Date(timeIntervalSinceReferenceDate: 1_000)
        settings.avatar = Data([1, 2, 3])
        settings.network.proxy = "proxy.local"
        let checker = try SettingsSchema(of: settings).checker()
        let good = PlistValue.dictionary(store.contents(of: .user))
        #expect(checker.violations(of: good).isEmpty)
        var bad = store.contents(of: .user)
        bad["theme"] = "blue"
        bad["autoPlay"] = "yes"
        #expect(checker.violations(of: .dictionary(bad)).map(\.description) == [
            "key 'theme': \"blue\" does not fit \"enum\": [\"light\", \"dark\"]",
            "key 'autoPlay': \"yes\" does not fit \"type\": \"boolean\"",
        ])
    }

    /// The `settings` tool, built beside the test bundle, reads the schema the library wrote.
    @Test func theToolChecksFilesAgainstTheSchemaTheLibraryWrote() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let settings = SchemaAppSettings(store: store)
        settings.theme = .dark
        try await store.flush()
        let schemaPath = try SettingsSchema(of: settings).write(for: store)
        var tool = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        while tool.path.contains(".xctest") { tool = tool.deletingLastPathComponent() }
        tool = tool.appending(path: "settings")
        let lint = try PythonJSONSchema.launch(tool, ["lint", "--schema", schemaPath, dir.file().path])
        #expect(lint.status == 0, "\(lint.output)")
        let write = try PythonJSONSchema.launch(tool, ["write", dir.file().path, "Network/retries", "11"])
        #expect(write.status == 1)
        #expect(write.output.contains("key 'Network/retries': 11 does not fit \"maximum\": 10"))
        #expect(try PythonJSONSchema.launch(tool, ["write", dir.file().path, "Network/retries", "9"]).status == 0)
    }

    @Test(.enabled(if: PythonJSONSchema.isAvailable, "python3 with the jsonschema module is not installed (apt install python3-jsonschema; .ci/run installs it)"))
    func pythonJSONSchemaAcceptsWhatTheLibraryWritesAndRefusesWhatDoesNotFit() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let settings = SchemaAppSettings(store: store)
        settings.autoPlay = true
        settings.timeout = 90
        settings.theme = .dark
        settings.apiToken = "abc"
        settings.lastSeen = Date(timeIntervalSinceReferenceDate: 1_000.25)
        settings.avatar = Data([0xFF, 0x00])
        settings.network.retries = 7
        settings.network.proxy = "proxy.local"
        try await store.flush()
        let schema = try SettingsSchema(of: settings).jsonText()
        let written = try PlistValue(contentsOf: dir.file())

        let good = try PythonJSONSchema.validate(written, against: schema, in: dir)
        #expect(good.status == 0, "\(good.output)")
        // The defaults the schema names fit it too.
        let defaults = try PythonJSONSchema.validate(["Network": ["timeout": 30.0, "retries": 3], "theme": "light"], against: schema, in: dir)
        #expect(defaults.status == 0, "\(defaults.output)")

        var bad = try #require(written.dictionaryValue)
        bad["theme"] = "blue"
        bad["Network"] = ["timeout": 500.0, "retries": 2.5]
        let refused = try PythonJSONSchema.validate(.dictionary(bad), against: schema, in: dir)
        #expect(refused.status == 1)
        #expect(refused.output.contains("theme: 'blue' is not one of ['light', 'dark']"))
        #expect(refused.output.contains("Network/timeout: 500.0 is greater than the maximum of 120"))
        #expect(refused.output.contains("Network/retries: 2.5 is not of type 'integer'"))
        // The library's own checker finds the same three.
        let ours = try SettingsSchema(of: settings).checker().violations(of: .dictionary(bad))
        #expect(Set(ours.map(\.keyPath)) == ["theme", "Network/timeout", "Network/retries"])
    }
}
