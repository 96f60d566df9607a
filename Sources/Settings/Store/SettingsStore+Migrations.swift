#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

nonisolated extension SettingsStore {
    /// Brings the user's values up to the current schema: runs the steps of `migrations` numbered
    /// above the version stored in the file (its top-level `"$version"` key, 0 when absent), then
    /// records the current version. The changes are saved like any other write and announced with
    /// origin ``SettingsChange/Origin/migration``. Call it once after opening the store, before
    /// reading settings; a store already at the current version is left alone.
    ///
    /// ```swift
    /// let store = SettingsStore.file(url)
    /// try store.migrate(with: SettingsMigrations { m in
    ///     m.renameKey("timeout", to: "Network/timeout", inVersion: 1)
    ///     m.convert("volume", inVersion: 2) { old in old.intValue.map { .real(Double($0) / 100) } }
    /// })
    /// ```
    ///
    /// - Parameter migrations: the steps and the current version.
    /// - Returns: the version the values were stored at.
    /// - Throws: ``SettingsError`` (`.invalidFile`) naming the step that failed, or when the
    ///   stored `"$version"` is not an integer; `.unstorable` when the migrated values nest
    ///   deeper than readers accept (512 levels). Nothing is changed then.
    @discardableResult
    public func migrate(with migrations: SettingsMigrations) throws(SettingsError) -> Int {
        let source = url?.path ?? "in-memory store"
        var failure: SettingsError?
        var from = 0
        var migrated: [SettingsKey] = []
        replace(.user, origin: .migration) { s in
            var user = s[.user]
            let stored: Int
            do throws(SettingsError) {
                stored = try SettingsMigrations.storedVersion(of: user, source: source)
            } catch {
                failure = error
                return
            }
            from = stored
            guard stored < migrations.version else { return }
            do throws(SettingsError) {
                try migrations.migrate(&user, source: source)
            } catch {
                failure = error
                return
            }
            if var refusal = user.nestingRefusal() {
                // What no reader could load back is never stored (it would fail every save).
                refusal.append(detail: "the migrations to version \(migrations.version) were not applied")
                failure = refusal
                return
            }
            user[SettingsMigrations.versionKey] = .integer(PlistInteger(Int64(migrations.version)))
            var changed: [SettingsKey] = []
            user.collectDifferingPaths(from: s[.user], prefix: [], into: &changed)
            s.modify(.user) { $0 = user }
            for key in changed { s.markDirtyKeepingAlive(key, store: self) }
            migrated = changed
        }
        if let failure { throw failure }
        history?.note(migrated, as: .migration)  // provenance: recorded as a migration at the next save
        return from
    }
}
