public import SettingsPlist
import SettingsFiles

/// Which settings hold secrets (tokens, passwords), and how their values are kept out of what is
/// printed.
///
/// A key is secret when it is marked (``SettingsKey/secret(_:)``) or when one of its components
/// is named like a secret (``isSecretName(_:)``). Secret values are left out of
/// ``SettingsError`` and ``SettingsDiagnostic`` messages and of the description of a
/// `@Setting`; the `settings` tool prints them as ``redactedText`` unless given `--show-secrets`.
///
/// ```swift
/// SettingsSecrets.isSecretName("apiToken")                  // true
/// let shown = SettingsSecrets.redacting(["user": "ada", "password": "hunter2"])
/// // ["user": "ada", "password": "<redacted>"]
/// ```
public enum SettingsSecrets {
    /// What a secret value is printed as.
    public static let redactedText = PlistSecrets.redactedText

    /// Whether a key component is named like a secret: it contains password, passwd,
    /// passphrase, passcode, secret, token, apiKey, accessKey, privateKey, credential, pwd, jwt,
    /// bearer, authHeader, authorizationHeader, licenseKey, encryptionKey, signingKey,
    /// sessionCookie, authCookie, otpSeed or pinCode (letters only, case ignored, so `api_key`,
    /// `API-Key` and `apiKey` all count), or its last word is pin, otp or cookie (`userPin`,
    /// `SIM_PIN`; not `pinnedTabs` or `spinner`).
    ///
    /// - Parameter component: one component of a key path.
    public static func isSecretName(_ component: String) -> Bool {
        PlistSecrets.isSecretName(component)
    }

    /// Whether a key component is named like it may hold a secret though ``isSecretName(_:)``
    /// does not count it: it contains authorization, signature, cookie or sessionId, or its last
    /// word is auth, key, salt, hash, nonce, cert, certificate or license (`hotKey`,
    /// `signingSalt`; `passwordHash` is secret by its `password`). Sync warns about such keys when they leave a device in
    /// clear.
    ///
    /// ```swift
    /// SettingsSecrets.mayBeSecretName("signingSalt")   // true
    /// SettingsSecrets.mayBeSecretName("keyboard")      // false
    /// ```
    ///
    /// - Parameter component: one component of a key path.
    public static func mayBeSecretName(_ component: String) -> Bool {
        PlistSecrets.secrecy(ofName: component) == .maybe
    }

    /// `value` with every value under a secret key replaced by ``redactedText``; the whole value
    /// when `key` itself is secret.
    ///
    /// ```swift
    /// SettingsSecrets.redacting(["token": "abc", "user": "ada"])   // ["token": "<redacted>", "user": "ada"]
    /// ```
    ///
    /// - Parameters:
    ///   - value: the value to print.
    ///   - key: the key path it is stored under, if known.
    public static func redacting(_ value: PlistValue, under key: SettingsKey? = nil) -> PlistValue {
        PlistSecrets.redacting(value, pathIsSecret: key?.isSecret ?? false)
    }

    /// Two versions of a value redacted for a diff: a secret that changed shows as
    /// `<redacted (changed)>`, one that did not as ``redactedText``.
    ///
    /// - Parameters:
    ///   - old: the old value.
    ///   - new: the new value.
    public static func redacting(_ old: PlistValue, _ new: PlistValue) -> (PlistValue, PlistValue) {
        PlistSecrets.redacting(old, new)
    }
}
