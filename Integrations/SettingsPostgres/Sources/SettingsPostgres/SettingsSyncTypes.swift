public import Foundation
public import Settings
public import SettingsPlist

/// Which user-layer keys a ``SettingsSync`` shares with other devices.
///
/// ```swift
/// let scope: SettingsSyncScope = .excluding(["Window", "Recent/files"])  // per-device keys stay local
/// ```
public enum SettingsSyncScope: Hashable, Sendable {
    /// Every user-layer leaf syncs.
    case all
    /// Every leaf except those at or below one of these key paths.
    case excluding([SettingsKey])

    /// Whether `key` syncs.
    ///
    /// - Parameter key: a leaf key path.
    public func includes(_ key: SettingsKey) -> Bool {
        switch self {
        case .all: return true
        case .excluding(let prefixes):
            return !prefixes.contains { prefix in
                key.components.count >= prefix.components.count
                    && Array(key.components.prefix(prefix.components.count)) == prefix.components
            }
        }
    }
}

/// What a ``SettingsSync`` is doing.
///
/// ```swift
/// for await status in sync.statusUpdates { print(status) }   // "connecting", "uptodate 42", …
/// ```
public enum SettingsSyncStatus: Hashable, Sendable, CustomStringConvertible {
    /// Connecting to the server (or catching up right after connecting).
    case connecting
    /// Connected; every local change is pushed and every change up to `seq` is applied.
    case upToDate(seq: Int64)
    /// The server cannot be reached (`reason` says why); local changes are kept and pushed on reconnect.
    case offline(reason: String)
    /// Another process syncs this settings file; this one waits to take over.
    case standby
    /// ``SettingsSync/stop()`` was called, or ``SettingsSync/run()`` has not started yet.
    case stopped

    /// `connecting`, `uptodate 42`, `offline <reason>`, `standby`, `stopped`: one line.
    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .upToDate(let seq): "uptodate \(seq)"
        case .offline(let reason): "offline " + reason.replacingOccurrences(of: "\n", with: " ")
        case .standby: "standby"
        case .stopped: "stopped"
        }
    }
}

/// Two devices wrote one key concurrently: the write with the greater (hybrid logical clock,
/// device id) was kept on every device and the other one was lost.
///
/// Reported on the device whose write was lost, and on the device that received the older
/// write after its own newer one.
///
/// ```swift
/// for await conflict in sync.conflicts { print(conflict) }
/// // Network/timeout: this device's 30 lost to 60 from 3F2A1C… at 2026-11-25T10:15:02Z
/// ```
public struct SettingsSyncConflict: Hashable, Sendable, CustomStringConvertible {
    /// The key path both devices wrote.
    public var key: SettingsKey
    /// The value kept everywhere (`nil`: the key was removed).
    public var keptValue: PlistValue?
    /// The value that lost (`nil`: a removal lost).
    public var lostValue: PlistValue?
    /// The device whose write was kept.
    public var keptDevice: UUID
    /// The device whose write was lost.
    public var lostDevice: UUID
    /// The hybrid logical clock of the kept write (`(unix ms << 16) | counter`).
    public var keptClock: Int64
    /// The hybrid logical clock of the lost write.
    public var lostClock: Int64
    /// Whether the lost write was made on this device.
    public var thisDeviceLost: Bool

    /// When the kept write was made, from its clock.
    public var keptDate: Date { Date(timeIntervalSince1970: Double(keptClock >> 16) / 1000) }

    /// `Network/timeout: this device's 30 lost to 60 from 3F2A1C… at …`.
    public var description: String {
        func show(_ v: PlistValue?) -> String {
            guard let v else { return "(removed)" }
            if key.isSecret { return "<secret>" }
            return v.shortDescription
        }
        let who = thisDeviceLost ? "this device's" : "\(lostDevice.uuidString.prefix(6))…'s"
        let from = thisDeviceLost ? "from \(keptDevice.uuidString.prefix(6))…" : "from this device"
        return "\(key.path): \(who) \(show(lostValue)) lost to \(show(keptValue)) \(from) at \(keptDate.formatted(.iso8601))"
    }
}

/// Errors and problems of a ``SettingsSync``: thrown by its factory and ``SettingsSync/synchronize()``,
/// and reported (without stopping anything) on ``SettingsSync/problems``.
///
/// Limit errors name the key and the sizes: the leaf stays local, is not retried until it changes,
/// and never holds back other keys. Rows from the server that cannot be applied are reported once
/// as ``badRow(key:seq:reason:)`` and skipped.
public enum SettingsSyncError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A key path longer than 1,024 bytes or 32 components.
    case keyTooLong(key: String, bytes: Int, components: Int)
    /// A value whose binary plist is larger than `limit` bytes (256 KiB).
    case valueTooLarge(key: String, bytes: Int, limit: Int)
    /// More than `limit` (100,000) leaves would sync: new keys stay local.
    case tooManyKeys(key: String, count: Int, limit: Int)
    /// A key path that cannot sync (empty, an empty component, a control character): it stays
    /// local, reported once, and holds back no other key.
    case badKey(key: String, reason: String)
    /// A secret key (``SettingsSyncSecrets``) found on the server while this device has no
    /// end-to-end key: the device keeps its own value. Reported once per key.
    case secretNotSynced(key: String)
    /// A server row of a secret key that was not applied: not sealed (a value or a deletion in
    /// clear), sealed for another user, app, key, version or end-to-end key, or an older version
    /// than this device already had (put back by someone with access to the database). The
    /// device keeps its value. Reported once per row.
    case secretRefused(key: String, seq: Int64, reason: String)
    /// A change of a secret key that stays on this device for now: this run has no end-to-end
    /// key, or the value on the server was sealed with another key (pushing would overwrite what
    /// the user's other devices can read). Pushed by a run that has the right key; reported once.
    case secretHeldBack(key: String, reason: String)
    /// The end-to-end key is not 256 bits (``SettingsSyncSecrets/encrypted(with:)``).
    case invalidSecretKey(bits: Int)
    /// A key that syncs in clear but is named like it may hold a secret (`hotKey`,
    /// `passwordHash`, `authorization`): mark it (``SettingsSyncSecrets/marking(_:)``) if it is
    /// one, or keep it local with the scope. Reported once per key when sync starts.
    case looksSecret(key: String)
    /// The leaf would take the settings file past `limit` bytes (32 MiB in the file's format, half
    /// the store's file limit), or the server's space past its 64 MiB of keys and values
    /// (`bytes` -1). The leaf stays local (or, pulled, is not applied) and is reported once.
    case spaceFull(key: String, bytes: Int, limit: Int)
    /// A provisioning step of ``SettingsSyncAdmin`` failed.
    case admin(String)
    /// The app id must be 1–200 bytes of UTF-8 without control characters (U+0000–U+001F, U+007F).
    case invalidApp(String)
    /// The server URL cannot be used.
    case invalidURL(String)
    /// A non-loopback server was named without `sslmode=require` (or `verify-full`).
    case tlsRequired(host: String)
    /// A row from the server that was skipped (bad key, undecodable value, non-empty dictionary,
    /// timestamp more than 5 minutes ahead).
    case badRow(key: String, seq: Int64, reason: String)
    /// The server's schema has a version this library does not know.
    case schemaMismatch(found: Int, expected: Int)
    /// The server cannot be reached now (``SettingsSync/synchronize()``).
    case offline(reason: String)
    /// Another process syncs this settings file (``SettingsSync/synchronize()``).
    case standby
    /// ``SettingsSync/run()`` is not running.
    case notRunning

    /// One line naming the key, the sizes or the reason.
    public var description: String {
        switch self {
        case let .keyTooLong(key, bytes, components):
            "key too long to sync: \(Self.printable(key)) is \(bytes) bytes, \(components) components (limits 1024 bytes, 32 components)"
        case let .valueTooLarge(key, bytes, limit):
            "value too large to sync: \(key) is \(bytes) bytes (limit \(limit))"
        case let .tooManyKeys(key, count, limit):
            "too many keys to sync: \(key) would be leaf \(count) (limit \(limit))"
        case let .badKey(key, reason):
            "key cannot sync: \(Self.printable(key)): \(reason)"
        case let .secretNotSynced(key):
            "secret not synced: \(Self.printable(key)) is on the server, but this device has no end-to-end key (secrets: .encrypted(with:)); its own value is kept"
        case let .secretRefused(key, seq, reason):
            "secret not applied: \(Self.printable(key)) (change \(seq)): \(reason); this device keeps its value"
        case let .secretHeldBack(key, reason):
            "secret held back: \(Self.printable(key)) stays on this device: \(reason)"
        case let .invalidSecretKey(bits):
            "the end-to-end key for secrets is \(bits) bits; it must be 256 bits (32 bytes)"
        case let .looksSecret(key):
            "\(Self.printable(key)) syncs in clear but is named like a secret: mark it with secrets: .marking([.secret(\"\(Self.printable(key))\")]) if it is one, or leave it out of the scope"
        case let .spaceFull(key, bytes, limit):
            bytes < 0 ? "sync space full on the server (limit \(limit) bytes): \(Self.printable(key)) kept local"
                : "sync space full: \(Self.printable(key)) would make the settings file about \(bytes) bytes (limit \(limit)); not synced"
        case let .admin(why):
            "settings-sync-admin: \(why)"
        case let .invalidApp(app):
            "invalid app id \"\(Self.printable(app))\": \(app.utf8.count) bytes (must be 1–200, no control characters)"
        case let .invalidURL(why):
            "invalid PostgreSQL URL: \(why)"
        case let .tlsRequired(host):
            "TLS is required for \(host): add ?sslmode=require to the URL (plain connections are allowed only to loopback)"
        case let .badRow(key, seq, reason):
            "skipped row \(Self.printable(key)) (change \(seq)): \(reason)"
        case let .schemaMismatch(found, expected):
            "server schema version \(found), this library knows \(expected)"
        case let .offline(reason):
            "offline: \(reason)"
        case .standby:
            "another process syncs this settings file"
        case .notRunning:
            "sync is not running"
        }
    }
}

extension SettingsSyncError {
    /// `text` cut at 80 characters with control characters escaped (`\u{0}`): one printable line.
    static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(80) {
            if scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}

extension PlistValue {
    /// A one-line rendering for messages: strings bare, others by their description, cut at 80.
    var shortDescription: String {
        let text: String
        if case .string(let s) = self { text = s } else { text = String(describing: self) }
        return text.count > 80 ? String(text.prefix(79)) + "…" : text
    }
}
