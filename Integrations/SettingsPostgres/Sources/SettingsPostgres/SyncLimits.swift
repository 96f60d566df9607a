import Settings

/// Limits checked before pushing and on pulled rows.
enum SyncLimits {
    static let keyBytes = 1024
    static let keyComponents = 32
    static let valueBytes = 256 * 1024
    static let leaves = 100_000
    static let pushBatch = 1000
    static let pullPage = 2000
    /// The space total on the server: keys and values of every entry (64 MiB).
    static let spaceBytes = 64 << 20
    /// The spaces (app ids) one role may have on the server.
    static let spacesPerUser = 100
    /// The devices one space remembers (their cursors, for `purge`): a new device's check-in
    /// forgets the least recently seen one past this.
    static let devicesPerSpace = 100
    /// The total a device pushes or applies: half the store's default `maximumFileSize` (64 MiB),
    /// so the settings file stays loadable in either format.
    static let clientSpaceBytes = 32 << 20
    /// How far ahead of the server clock a row's HLC may be (5 minutes).
    static let futureMs: Int64 = 300_000
}

/// The rules every synced key path follows, checked before pushing and on pulled rows alike.
enum SyncKeyRules {
    /// Why `path` cannot sync, or `nil`.
    static func problem(_ path: String) -> SettingsSyncError? {
        let key = SettingsKey(path)
        if path.utf8.count > SyncLimits.keyBytes || key.components.count > SyncLimits.keyComponents {
            return .keyTooLong(key: path, bytes: path.utf8.count, components: key.components.count)
        }
        if path.isEmpty || key.path != path || key.components.contains(where: \.isEmpty) {
            return .badKey(key: path, reason: "an empty key path component")
        }
        if path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            return .badKey(key: path, reason: "a control character (U+0000–U+001F or U+007F)")
        }
        return nil
    }
}
