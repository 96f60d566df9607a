import Foundation
import Settings
import Testing
import SettingsTestSupport

// Issue 12, "API polish from writing a client against the docs": one test per finding.

/// An enum and a Codable struct that only declare `SettingsValue`: the transformers come from
/// the protocol's extensions.
enum PolishMode: String, Sendable, SettingsValue { case fast, safe }
struct PolishLimits: Codable, Equatable, Sendable, SettingsValue { var files = 3 }
struct PolishModel: SettingsModel {
    @Archived var mode = PolishMode.safe
    @Archived var limits = PolishLimits()
}

struct APIPolishTests {
    /// `@Setting`, `SettingsStore.Key`, `value(_:default:)` and `@Archived` accept the same types:
    /// an enum or Codable struct that declares `SettingsValue` works in every one of them.
    @Test func aDeclaredSettingsValueWorksInEveryAPI() throws {
        let store = SettingsStore.inMemory(["mode": "fast", "limits": ["files": 9]])
        #expect(store.value("mode", default: PolishMode.safe) == .fast)
        #expect(store.value("limits", default: PolishLimits()) == PolishLimits(files: 9))
        #expect(store[SettingsStore.Key("mode", default: PolishMode.safe)] == .fast)
        let setting = Setting("mode", default: PolishMode.safe, store: store)
        #expect(setting.wrappedValue == .fast)
        setting.wrappedValue = .safe
        #expect(store["mode"] == "safe")
        let optional = Setting<PolishLimits?>("limits", store: store)
        #expect(optional.wrappedValue == PolishLimits(files: 9))
        #expect(ReadOnlySetting("limits", default: PolishLimits(), store: store).wrappedValue.files == 9)

        let temporary = try TemporaryDirectory()
        let dir = temporary.url
        var model = PolishModel()
        model.mode = .fast
        model.limits.files = 5
        try model.save(to: dir.appending(path: "model.plist"))
        #expect(try PlistValue(contentsOf: dir.appending(path: "model.plist")) == ["mode": "fast", "limits": ["files": 5]])
        let loaded = try PolishModel.load(from: dir.appending(path: "model.plist"))
        #expect(loaded.mode == .fast && loaded.limits.files == 5)
    }

    /// `@Setting var lastUpdate: Date?` needs no arguments, so the memberwise initialiser does not
    /// ask for it (it did: "missing argument for parameter 'lastUpdate'").
    @Test func aKeylessOptionalSettingNeedsNoArguments() {
        struct Defaults {
            @Setting(default: false) var autoPlay: Bool
            @Setting var lastUpdate: Date?
            @ReadOnlySetting var apiHost: String?
        }
        let store = SettingsStore.inMemory(["ApiHost": "example.com"])
        let defaults = SettingsStore.bind(Defaults(), to: store)
        #expect(defaults.lastUpdate == nil)
        #expect(defaults.$lastUpdate.key == "LastUpdate")
        let date = Date(timeIntervalSince1970: 1_000)
        defaults.lastUpdate = date
        #expect(store["LastUpdate"] == .date(date))
        #expect(defaults.lastUpdate == date)
        defaults.lastUpdate = nil
        #expect(store["LastUpdate"] == nil)
        #expect(defaults.apiHost == "example.com")
    }

    /// A non-optional setting declared without a default compiles (the argument-less `init()`
    /// cannot be limited to optionals), and stops with a message saying what to write.
    @Test func aNonOptionalSettingWithoutADefaultStopsWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            struct Broken { @Setting var count: Int }
            _ = SettingsStore.bind(Broken(), to: .inMemory()).count
        }
    }

    @Test func keysComeFromStringInterpolation() {
        let store = SettingsStore.inMemory()
        let prefix = "Items"
        for i in 0..<3 { store["\(prefix)/item\(i)"] = PlistValue(i) }
        #expect(store["Items/item2"] == 2)
        let key: SettingsKey = "\(prefix)/count"
        #expect(key.components == ["Items", "count"])
    }

    @Test func plistValuesFromSwiftValues() {
        let count = 7, ratio = 0.25, enabled = true, name = "Ada", big = UInt64.max, small = Int64.min
        #expect(PlistValue(count) == .integer(PlistInteger(Int64(7))))
        #expect(PlistValue(ratio) == .real(0.25))
        #expect(PlistValue(enabled) == .bool(true))
        #expect(PlistValue(name) == .string("Ada"))
        #expect(PlistValue(big) == .integer(PlistInteger(UInt64.max)))
        #expect(PlistValue(small) == .integer(PlistInteger(Int64.min)))
    }

    /// "has type string, expected Bool" named one type as plists do and the other as Swift does.
    @Test func typeMismatchesNameBothTypesAsSwiftTypes() throws {
        let store = SettingsStore.inMemory(["flag": "yes", "list": [1], "table": ["a": 1], "count": 2.5])
        let error = try #require(throws: SettingsError.self) { let _: Bool = try store.requiredValue(for: "flag") }
        #expect(error.description == "key 'flag' has type String, expected Bool (from user file)")
        #expect(error.foundType == "String")
        #expect(SettingsError(.typeMismatch, key: "list", expectedType: "Int", foundType: "array").description
            == "key 'list' has type Array, expected Int")
        #expect(SettingsError(.typeMismatch, key: "table", expectedType: "Int", foundType: "dict").foundType == "Dictionary")
        #expect(SettingsError(.typeMismatch, key: "count", expectedType: "Int", foundType: "real").foundType == "Double")
    }

    // MARK: Secrets

    @Test(arguments: ["password", "dbPassword", "API_TOKEN", "client-secret", "apiKey", "privateKey", "Credentials", "passphrase",
                      "Pässe_password", "TOKEN_ÄÖ", "tok-en"])
    func secretNamesAreRecognised(_ name: String) {
        #expect(SettingsSecrets.isSecretName(name))
        #expect(SettingsKey("Sync/\(name)").isSecret)
    }

    @Test(arguments: ["timeout", "username", "keyboard", "host", "apiVersion", "tok", "Größe", "passwör"])
    func ordinaryNamesAreNotSecret(_ name: String) {
        #expect(!SettingsSecrets.isSecretName(name))
        #expect(!SettingsKey(name).isSecret)
    }

    @Test func markedKeysAreSecretAndEqualToUnmarkedOnes() {
        let marked = SettingsKey.secret("Sync/credentials2")
        #expect(marked.isSecret)
        #expect(SettingsKey.secret("session") == SettingsKey("session"))
        #expect(!SettingsKey("session").isSecret)
    }

    @Test func secretValuesAreLeftOutOfErrorsAndDiagnostics() throws {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory(["polish.session": "not-a-uuid-hunter2", "apiToken": 42])
        let session = Setting(SettingsKey.secret("polish.session"), default: UUID(), store: store)
        _ = session.wrappedValue
        let messages = DiagnosticsRecorder.diagnostics(for: "polish.session").map(\.message)
        #expect(messages == ["key 'polish.session' has type String, expected UUID (from user file) (details not shown: the key is secret); using the default"])
        #expect(!messages.joined().contains("hunter2"))

        let error = try #require(throws: SettingsError.self) {
            let _: String = try store.requiredValue(for: "apiToken")
        }
        #expect(error.description == "key 'apiToken' has type Int, expected String (from user file)")
        let withDetail = SettingsError(.typeMismatch, key: "apiToken", expectedType: "URL", foundType: "string", detail: "\"hunter2\" is not a URL")
        #expect(withDetail.description == "key 'apiToken' has type String, expected URL (details not shown: the key is secret)")
        let plain = SettingsError(.typeMismatch, key: "homepage", expectedType: "URL", foundType: "string", detail: "\"x y\" is not a URL")
        #expect(plain.description == #"key 'homepage' has type String, expected URL ("x y" is not a URL)"#)
    }

    @Test func settingDescriptionsRedactSecrets() {
        let store = SettingsStore.inMemory(["apiToken": "hunter2", "API": ["host": "example.com"]])
        let token = Setting("apiToken", default: "", store: store)
        let marked = Setting(.secret("session"), default: "abc", store: store)
        let host = ReadOnlySetting("API/host", default: "", store: store)
        #expect(token.description == "apiToken = <redacted> (from user file)")
        #expect(marked.description == "session = <redacted> (from the default in code)")
        #expect(host.description == "API/host = example.com (from user file)")
    }

    @Test func plistValuesAreRedactedForPrinting() {
        let value: PlistValue = ["user": "ada", "password": "hunter2", "API": ["token": ["a", "b"], "host": "example.com"], "list": [["secret": 1]]]
        #expect(SettingsSecrets.redacting(value)
            == ["user": "ada", "password": "<redacted>", "API": ["token": "<redacted>", "host": "example.com"], "list": [["secret": "<redacted>"]]])
        #expect(SettingsSecrets.redacting("hunter2", under: "Sync/password") == "<redacted>")
        #expect(SettingsSecrets.redacting("plain", under: "Sync/host") == "plain")
    }

    @Test func redactedComparisonsStillShowThatASecretChanged() {
        let (a, b) = SettingsSecrets.redacting(["token": "old", "same": ["password": "x"], "host": "a"],
                                               ["token": "new", "same": ["password": "x"], "host": "b", "secret": "s"])
        #expect(a == ["token": "<redacted>", "same": ["password": "<redacted>"], "host": "a"])
        #expect(b == ["token": "<redacted (changed)>", "same": ["password": "<redacted>"], "host": "b", "secret": "<redacted>"])
    }
}
