#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import Testing
@testable import Settings
import SettingsTestSupport

struct ArgumentsTests {
    // MARK: Command-line arguments

    @Test func argumentsWinOverEveryOtherLayer() {
        let store = SettingsStore.inMemory(["timeout": 60])
        store.register(defaults: ["timeout": 30, "retries": 3])
        store.addOverrides(["timeout": 45])
        let diagnostics = store.applyArguments(["myapp", "-timeout", "5"])
        #expect(diagnostics.isEmpty)
        #expect(store["timeout"] == 5)
        #expect(store.source(of: "timeout") == .volatile)
        #expect(store.value(for: "timeout", in: .user) == 60)
        #expect(store.source(of: "retries") == .defaults)
        store.setVolatile(nil, for: "timeout")
        #expect(store.source(of: "timeout") == .overrides)
    }

    static let argumentValues: [(String, PlistValue)] = [
        ("5", .integer(5)),
        ("-5", .integer(-5)),                          // a negative number is a value, not a key
        ("1.5", .real(1.5)),
        ("YES", .bool(true)),
        ("false", .bool(false)),
        ("hello world", .string("hello world")),
        ("  spaced  ", .string("  spaced  ")),
        ("a;b", .string("a;b")),                       // bare text is never a strings-file dictionary
        ("", .string("")),
        ("-", .string("-")),
        ("\"42\"", .string("42")),                     // quotes keep a number a string
        ("'x y'", .string("x y")),
        ("(a, 2, NO)", .array([.string("a"), .integer(2), .bool(false)])),
        (" { host = example.com; port = 8080; }", .dictionary(PlistDictionary([("host", .string("example.com")), ("port", .integer(8080))]))),
        ("<0fbd>", .data(Data([0x0F, 0xBD]))),
    ]

    @Test(arguments: argumentValues)
    func argumentValuesAreAsTypedAsPossible(text: String, expected: PlistValue) {
        let store = SettingsStore.inMemory()
        let diagnostics = store.applyArguments(["myapp", "-value", text])
        #expect(diagnostics.isEmpty)
        #expect(store["value"] == expected)
    }

    @Test func typedSettingsReadArgumentValues() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["name": "Ada", "verbose": false])
        store.applyArguments(["myapp", "-count", "5", "-ratio", "2", "-on", "yes", "-name", "42", "-verbose", "1"])
        #expect(store.value("count", default: 0) == 5)
        #expect(store.value("ratio", default: 0.0) == 2.0)
        #expect(store.value("on", default: false))
        // A key already holding a string keeps the word a string; a Bool reads 1 and 0.
        #expect(store.value("name", default: "") == "42")
        #expect(store["verbose"] == true)
    }

    @Test func namespacedArgumentKeys() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Network": ["Proxy": ["port": 80]]])
        store.applyArguments(["myapp", "-Network/Proxy/host", "example.com", #"-Paths/a\/b"#, "x"])
        #expect(store["Network/Proxy/host"] == "example.com")
        #expect(store.source(of: "Network/Proxy/host") == .volatile)
        #expect(store["Network/Proxy"] == ["port": 80, "host": "example.com"])  // merged over the defaults
        #expect(store.value(for: SettingsKey(components: ["Paths", "a/b"])) == "x")
    }

    @Test func nonKeyArgumentsAreSkipped() {
        let store = SettingsStore.inMemory()
        let diagnostics = store.applyArguments([
            "-first", "ignored",                           // the program name
            "positional", "-5", "-.5", "--flag", "--name=x", "-", "-a", "1", "--", "-b", "2",
        ])
        #expect(diagnostics.isEmpty)
        #expect(store.contents(of: .volatile) == ["a": 1])
        #expect(store.applyArguments([]).isEmpty)
        #expect(store.applyArguments(["myapp"]).isEmpty)
    }

    @Test func keysWithoutValuesAreReported() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let diagnostics = store.applyArguments([
            "myapp", "-Arguments.flag", "-Arguments.timeout", "5", "-Arguments.dashed", "--x",
            "-Arguments//empty", "1", "-Arguments.last",
        ])
        #expect(diagnostics.map(\.kind) == [.invalidOverride, .invalidOverride, .invalidOverride, .invalidOverride])
        #expect(diagnostics.map(\.key) == ["Arguments.flag", "Arguments.dashed", "Arguments//empty", "Arguments.last"])
        #expect(diagnostics[0].message == "command-line argument -Arguments.flag has no value; ignored")
        #expect(diagnostics[2].message == "command-line argument -Arguments//empty names an empty key component; ignored")
        #expect(store.contents(of: .volatile) == ["Arguments.timeout": 5])
        #expect(DiagnosticsRecorder.diagnostics(for: "Arguments.last") == [diagnostics[3]])
    }

    @Test func malformedLiteralsFallBackToStrings() {
        let store = SettingsStore.inMemory()
        let diagnostics = store.applyArguments(["myapp", "-list", "(a, b", "-dict", "{ a = 1 }", "-quoted", "\"open"])
        #expect(store["list"] == "(a, b")
        #expect(store["dict"] == "{ a = 1 }")
        #expect(store["quoted"] == "\"open")
        #expect(diagnostics.map(\.key) == ["list", "dict", "quoted"])
        #expect(diagnostics.allSatisfy { $0.kind == .invalidOverride })
        #expect(diagnostics[0].message == "command-line argument -list: value is not a valid property-list literal (line 1:1: unterminated array: no ')' for this '('); using it as a string")
        #expect(diagnostics[1].message.contains("line 1:9: expected ';'"))
    }

    @Test func laterArgumentsWinAndTheGenerationMoves() {
        let store = SettingsStore.inMemory()
        let before = store.generation
        store.applyArguments(["myapp", "-x", "1", "-x", "2"])
        #expect(store["x"] == 2)
        #expect(store.generation != before)
    }

    @Test func volatileValuesAreNeverWrittenToTheUserFile() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.plist")
        let store = SettingsStore.file(url)
        store.applyArguments(["myapp", "-fromArguments", "1"])
        store.applyEnvironment(prefix: "APP", ["APP_fromEnvironment": "2"])
        store["fromUser"] = 3
        try await store.flush()
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains("fromUser"))
        #expect(!text.contains("fromArguments"))
        #expect(!text.contains("fromEnvironment"))
        #expect(store["fromArguments"] == 1)
        #expect(store["fromEnvironment"] == 2)
    }

    @Test(arguments: [
        ("-timeout", true), ("-Network/timeout", true), ("-x", true), ("-é", true), ("-.hidden", true),
        ("-5", false), ("-.5", false), ("--flag", false), ("-", false), ("--", false), ("timeout", false), ("", false),
    ])
    func recognisesArgumentKeys(argument: String, isKey: Bool) {
        #expect(SettingsStore.isArgumentKey(argument) == isKey)
    }

    // MARK: Environment

    @Test func environmentVariablesMapToExistingKeys() {
        let store = SettingsStore.inMemory(["Theme": "light"])
        store.register(defaults: ["timeout": 30, "autoPlay": false, "Network": ["Proxy": ["host": ""]]])
        let diagnostics = store.applyEnvironment(prefix: "MYAPP", [
            "MYAPP_TIMEOUT": "5",
            "MYAPP_NETWORK__PROXY__HOST": "example.com",
            "MYAPP_AUTO_PLAY": "yes",
            "MYAPP_theme": "dark",
            "MYAPP_NEW_KEY": "(1, two)",
            "MYAPP_Network__Proxy__PORT": "8080",
            "OTHER_TIMEOUT": "1",
            "MYAPPTIMEOUT": "2",
            "myapp_timeout": "3",
            "PATH": "/usr/bin",
        ])
        #expect(diagnostics.isEmpty)
        // Applied in name order: AUTO_PLAY, NETWORK__PROXY__HOST, NEW_KEY, Network__Proxy__PORT, TIMEOUT, theme.
        #expect(store.contents(of: .volatile) == [
            "autoPlay": true,
            "Network": ["Proxy": ["host": "example.com", "PORT": 8080]],
            "NEW_KEY": [1, "two"],
            "timeout": 5,
            "Theme": "dark",
        ])
        #expect(store.source(of: "timeout") == .volatile)
        #expect(store.value(for: "timeout", in: .defaults) == 30)
    }

    @Test func aPrefixEndingInAnUnderscoreIsUsedAsItIs() {
        let store = SettingsStore.inMemory()
        store.applyEnvironment(prefix: "APP_", ["APP_x": "1", "APP__y": "2"])
        #expect(store["x"] == 1)
        #expect(store["_y"] == 2)
    }

    @Test func ambiguousAndEmptyNamesAreReported() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Mode": 1, "mode": 2, "Net": ["Port": 1, "port": 2]])
        let diagnostics = store.applyEnvironment(prefix: "APP", [
            "APP_MODE": "3",
            "APP_mode": "4",
            "APP_NET__PORT": "5",
            "APP_": "6",
            "APP_A____B": "7",
        ])
        #expect(store.contents(of: .volatile) == ["mode": 4])
        #expect(diagnostics.count == 4)
        #expect(diagnostics.allSatisfy { $0.kind == .invalidOverride })
        let messages = diagnostics.map(\.message)
        #expect(messages.contains("environment variable APP_MODE could mean 'Mode' or 'mode' (at top level); ignored"))
        #expect(messages.contains("environment variable APP_NET__PORT could mean 'Port' or 'port' (at 'Net'); ignored"))
        #expect(messages.contains("environment variable APP_ names an empty key component; ignored"))
        #expect(messages.contains("environment variable APP_A____B names an empty key component; ignored"))
    }

    @Test func variablesNamingOneKeyAreReportedAndTheLaterNameWins() {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["timeout": 30])
        let diagnostics = store.applyEnvironment(prefix: "APP", ["APP_timeout": "2", "APP_TIMEOUT": "1"])
        #expect(store["timeout"] == 2)
        #expect(diagnostics == [SettingsDiagnostic(.invalidOverride, key: "timeout",
                                                   "environment variables APP_TIMEOUT and APP_timeout both set 'timeout'; using APP_timeout")])
    }

    @Test func earlierVariablesOfTheSameCallCountAsExistingKeys() {
        let store = SettingsStore.inMemory()
        let diagnostics = store.applyEnvironment(prefix: "APP", ["APP_NET__HOST": "a", "APP_net__port": "1"])
        #expect(diagnostics.isEmpty)
        #expect(store.contents(of: .volatile) == ["NET": ["HOST": "a", "port": 1]])
    }

    @Test(arguments: [
        ("A", ["A"]), ("A__B", ["A", "B"]), ("A_B", ["A_B"]), ("A___B", ["A", "_B"]), ("A__", ["A", ""]), ("", [""]),
    ])
    func splitsEnvironmentNames(name: String, parts: [String]) {
        #expect(SettingsStore.splitEnvironmentName(name[...]) == parts)
    }

    @Test func environmentLiteralsFallBackToStringsWithADiagnostic() {
        let store = SettingsStore.inMemory()
        let diagnostics = store.applyEnvironment(prefix: "APP", ["APP_LIST": "(a,"])
        #expect(store["LIST"] == "(a,")
        #expect(diagnostics.map(\.message) == [
            "environment variable APP_LIST: value is not a valid property-list literal (line 1:1: unterminated array: no ')' for this '('); using it as a string",
        ])
    }
}
