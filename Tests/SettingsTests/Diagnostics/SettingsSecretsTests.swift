import Foundation
import Settings
import Testing

/// Secret keys: recognised by name or marked, and left out of errors, diagnostics and descriptions.
struct SettingsSecretsTests {
    @Test(arguments: ["password", "dbPassword", "API_TOKEN", "client-secret", "apiKey", "privateKey", "Credentials", "passphrase",
                      "Pässe_password", "TOKEN_ÄÖ", "tok-en",
                      // issue 30, item 2: the names the sync's review asked about
                      "authHeader", "bearer", "jwt", "licenseKey", "otpSeed", "pin", "pwd", "sessionCookie", "encryptionKey",
                      "userPin", "SIM_PIN", "pin2", "PINCode", "totp_seed", "Größe_pin"])
    func secretNamesAreRecognised(_ name: String) {
        #expect(SettingsSecrets.isSecretName(name))
        #expect(SettingsKey("Sync/\(name)").isSecret)
    }

    @Test(arguments: ["timeout", "username", "keyboard", "host", "apiVersion", "tok", "Größe", "passwör",
                      // issue 30, item 2: `pin`, `otp` and `cookie` count only as the last word
                      "pinnedTabs", "spinner", "pinToTop", "mapping", "hotplug", "acceptCookies", "shipping"])
    func ordinaryNamesAreNotSecret(_ name: String) {
        #expect(!SettingsSecrets.isSecretName(name))
        #expect(!SettingsKey(name).isSecret)
    }

    /// Issue 30, item 2: names that may hold a secret, which sync warns about when they sync in clear.
    @Test func namesThatMayBeSecretAreNeitherSecretNorOrdinary() {
        for name in ["hotKey", "signingSalt", "authorization", "acceptCookies", "sessionId", "license", "user_auth"] {
            #expect(SettingsSecrets.mayBeSecretName(name), "\(name)")
            #expect(!SettingsSecrets.isSecretName(name), "\(name)")
        }
        for name in ["keyboard", "timeout", "password", "userPin", "author"] {
            #expect(!SettingsSecrets.mayBeSecretName(name), "\(name)")
        }
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
