public import Crypto
import Foundation
public import Settings

/// What a ``SettingsSync`` does with secret keys: those marked ``Settings/SettingsKey/secret(_:)``
/// (list them with ``marking(_:)``: a store cannot tell them from their paths) and those named like
/// a secret (``Settings/SettingsKey/isSecret``: `password`, `apiToken`, …).
///
/// By default (``notSynced``) they never leave the device. With ``encrypted(with:)`` they sync
/// end-to-end encrypted (ChaCha20-Poly1305, bound to the user, app id, key path and version),
/// deletions too: the server holds only ciphertext, and a device without the key reports those
/// keys once and keeps its own values. A key that was secret once on a device stays secret there,
/// whatever a later run is given: its changes wait for a run with the key, never leave in clear.
///
/// ```swift
/// let key = SymmetricKey(data: keyFromTheUsersKeychain)   // 256 bits, the same on every device
/// let sync = try SettingsSync.postgres(
///     url: url, store: .shared, app: "com.example.notes",
///     secrets: .encrypted(with: key).marking([.secret("Session/cookie")]))
/// ```
public struct SettingsSyncSecrets: Sendable {
    /// The end-to-end key's bytes (`SymmetricKey` is not `Sendable`; its bytes are).
    let keyBytes: Data?
    let marked: [SettingsKey]

    /// The end-to-end key, or `nil` when secrets do not sync.
    var key: SymmetricKey? { keyBytes.map { SymmetricKey(data: $0) } }

    /// Secret keys stay on this device (the default).
    public static let notSynced = SettingsSyncSecrets(keyBytes: nil, marked: [])

    /// Secret keys sync encrypted with `key` (256 bits); the server never sees their values.
    ///
    /// A key of another size is refused by ``SettingsSync/postgres(url:password:store:app:scope:secrets:logger:)``
    /// (``SettingsSyncError/invalidSecretKey(bits:)``).
    ///
    /// - Parameter key: the end-to-end key, the same on the user's devices and never on the server.
    /// - Returns: secrets that sync encrypted.
    public static func encrypted(with key: SymmetricKey) -> SettingsSyncSecrets {
        SettingsSyncSecrets(keyBytes: key.withUnsafeBytes { Data($0) }, marked: [])
    }

    /// These keys (and everything below them) count as secret too.
    ///
    /// - Parameter keys: keys your app marks ``Settings/SettingsKey/secret(_:)``.
    /// - Returns: the same policy with the keys added.
    public func marking(_ keys: [SettingsKey]) -> SettingsSyncSecrets {
        SettingsSyncSecrets(keyBytes: keyBytes, marked: marked + keys)
    }

    /// Whether `key` counts as secret.
    func isSecret(_ key: SettingsKey) -> Bool {
        key.isSecret || marked.contains { m in
            key.components.count >= m.components.count && Array(key.components.prefix(m.components.count)) == m.components
        }
    }
}

/// Where a sealed value belongs: what its seal authenticates besides the value.
struct SecretContext: Sendable, Hashable {
    /// The login role whose space holds it (the URL's user).
    var owner: String
    var app: String
    var path: String
    /// The version: the write's hybrid logical clock and the device that wrote it. A device's
    /// clocks only move forward, so a sealed value cannot be put back at a newer version.
    var hlc: Int64
    var device: UUID
}

/// The sealed form of a secret value: `SSE2`, then ChaCha20-Poly1305's nonce, ciphertext and tag,
/// authenticated together with its ``SecretContext`` (owner, app id, key path, clock, device): a
/// value cannot be moved to another user, app or key, nor put back at another version. An empty
/// plaintext is a deletion (a binary plist is never empty): a secret key's deletion is sealed too.
///
/// `SSE1` (schema 3 and earlier) was bound to the app id and key path only; such a value is opened
/// (``openLegacy(_:key:app:path:)``) only to learn whether this device holds the key it was sealed with.
enum SyncSecrets {
    static let magic: [UInt8] = Array("SSE2".utf8)
    static let legacyMagic: [UInt8] = Array("SSE1".utf8)
    /// Bytes a sealed value adds to its plaintext.
    static let overhead = 4 + 12 + 16

    static func associatedData(_ c: SecretContext) -> Data {
        Data("settings-sync secret v2\0\(c.owner)\0\(c.app)\0\(c.path)\0\(c.hlc)\0\(c.device.uuidString.lowercased())".utf8)
    }

    /// Seals `plaintext` (empty: a deletion) for `context`.
    ///
    /// - Throws: swift-crypto's error for a key that is not 256 bits (refused earlier, by
    ///   ``SettingsSync/postgres(url:password:store:app:scope:secrets:logger:)``).
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, _ context: SecretContext) throws -> [UInt8] {
        let box = try ChaChaPoly.seal(plaintext, using: key, authenticating: associatedData(context))
        return magic + Array(box.combined)
    }

    /// The plaintext (empty: a deletion), or `nil` when `bytes` is not sealed for `context` with `key`.
    static func open(_ bytes: [UInt8], key: SymmetricKey, _ context: SecretContext) -> [UInt8]? {
        guard isSealed(bytes), Array(bytes.prefix(magic.count)) == magic,
              let box = try? ChaChaPoly.SealedBox(combined: bytes.dropFirst(magic.count)),
              let plain = try? ChaChaPoly.open(box, using: key, authenticating: associatedData(context))
        else { return nil }
        return Array(plain)
    }

    /// The plaintext of a schema-3 (`SSE1`) value, or `nil`.
    static func openLegacy(_ bytes: [UInt8], key: SymmetricKey, app: String, path: String) -> [UInt8]? {
        guard bytes.count >= overhead, Array(bytes.prefix(legacyMagic.count)) == legacyMagic,
              let box = try? ChaChaPoly.SealedBox(combined: bytes.dropFirst(legacyMagic.count)),
              let plain = try? ChaChaPoly.open(box, using: key, authenticating: Data("settings-sync secret v1\0\(app)\0\(path)".utf8))
        else { return nil }
        return Array(plain)
    }

    /// Whether `bytes` look sealed (either version).
    static func isSealed(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= overhead else { return false }
        let head = Array(bytes.prefix(magic.count))
        return head == magic || head == legacyMagic
    }
}
