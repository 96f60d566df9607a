public import Crypto
import Foundation
public import Settings

/// What a ``SettingsSync`` does with secret keys: those marked ``Settings/SettingsKey/secret(_:)``
/// (list them with ``marking(_:)``: a store cannot tell them from their paths) and those named like
/// a secret (``Settings/SettingsKey/isSecret``: `password`, `apiToken`, …).
///
/// By default (``notSynced``) they never leave the device. With ``encrypted(with:)`` they sync
/// end-to-end encrypted (ChaCha20-Poly1305, bound to the app id and key path): the server holds
/// only ciphertext, and a device without the key reports those keys once and keeps its own values.
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

/// The sealed form of a secret value: `SSE1`, then ChaCha20-Poly1305's nonce, ciphertext and tag,
/// authenticated together with the app id and key path (a value cannot be moved to another key).
enum SyncSecrets {
    static let magic: [UInt8] = Array("SSE1".utf8)
    /// Bytes a sealed value adds to its plaintext.
    static let overhead = 4 + 12 + 16

    static func associatedData(app: String, path: String) -> Data {
        Data("settings-sync secret v1\0\(app)\0\(path)".utf8)
    }

    static func seal(_ plaintext: [UInt8], key: SymmetricKey, app: String, path: String) throws -> [UInt8] {
        let box = try ChaChaPoly.seal(plaintext, using: key, authenticating: associatedData(app: app, path: path))
        return magic + Array(box.combined)
    }

    /// The plaintext, or `nil` when `bytes` is not sealed (or was sealed for another key, app or path).
    static func open(_ bytes: [UInt8], key: SymmetricKey, app: String, path: String) -> [UInt8]? {
        guard isSealed(bytes) else { return nil }
        guard let box = try? ChaChaPoly.SealedBox(combined: bytes.dropFirst(magic.count)),
              let plain = try? ChaChaPoly.open(box, using: key, authenticating: associatedData(app: app, path: path))
        else { return nil }
        return Array(plain)
    }

    static func isSealed(_ bytes: [UInt8]) -> Bool {
        bytes.count >= overhead && Array(bytes.prefix(magic.count)) == magic
    }
}
