#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
import SettingsFiles

extension SettingsStore {
    /// The program's store: `$XDG_CONFIG_HOME/<executable name>/settings.plist` (`~/.config` when
    /// the variable is unset). `@Setting`s without a `store:` use it.
    ///
    /// Naming it costs nothing: the file is read, and watched, only when a value is first read
    /// or written, so a setting declared with the default `store: .shared` and then bound to
    /// another store never touches the shared file.
    public static let shared: SettingsStore = {
        let url = defaultFileURL(application: ProcessInfo.processInfo.processName)
        return SettingsStore.file(url)
    }()

    /// Where an application's settings file lives by default.
    ///
    /// ```swift
    /// SettingsStore.defaultFileURL(application: "MyApp")   // ~/.config/MyApp/settings.plist
    /// ```
    ///
    /// `XDG_CONFIG_HOME` is used when it is an absolute path; `HOME` when it is set and not empty;
    /// otherwise the user's home directory from the password database.
    ///
    /// - Parameter application: the application (or domain) name.
    public static func defaultFileURL(application: String) -> URL {
        defaultFileURL(application: application, environment: ProcessInfo.processInfo.environment)
    }

    /// ``defaultFileURL(application:)`` for a given environment (an empty variable counts as unset).
    static func defaultFileURL(application: String, environment: [String: String]) -> URL {
        URL(filePath: SettingsLocations.userFile(application: application, environment: { environment[$0] }))
    }

    /// How a file store notices changes made to its file by other processes or by hand.
    public enum ExternalChanges: Hashable, Sendable {
        /// inotify on Linux (the file's directory is watched, so replacing the file by rename is
        /// seen too), polling every second where inotify is not available or the directory is
        /// gone (the watch comes back when the directory does).
        case automatic
        /// Looks at the file's identity (inode, size, modification time) at this interval.
        case polling(Duration)
        /// Changes made elsewhere are picked up only when this process saves.
        case ignored
    }

    /// A store whose user layer is kept in the plist file at `url`.
    ///
    /// Creating the store does no I/O: the file is read at the first read or write of a value,
    /// in its own format, and watched for changes made elsewhere from shortly after. A missing
    /// file is an empty store (the file and its directories are created, owner-only, at the
    /// first save). A file that cannot be parsed is reported and left alone; if it is still
    /// malformed when a save would replace it, it is moved aside to
    /// `settings.plist.corrupt-<timestamp>`, never overwritten. A file that cannot be read
    /// (permissions, not a regular file, over the size limit) is never written. Both are reported
    /// to the store's ``diagnosticsHandler`` and kept in ``loadError``.
    ///
    /// Changes are saved `autosaveDelay` after the first change of a burst (a burst of writes
    /// becomes one file write) and by ``flush()``, which returns when they are on disk. Each save
    /// takes an advisory lock, reads what other processes wrote since, and writes only the keys
    /// this process changed on top of it, so concurrent writers lose nothing. All of it runs on
    /// the store's own thread, never on Swift's cooperative pool.
    ///
    /// **Lifetime.** A store with unsaved changes stays alive until they are saved, even when the
    /// program drops every reference to it, and they are saved when the process exits normally.
    ///
    /// ```swift
    /// let store = SettingsStore.file(URL(filePath: "/tmp/demo/settings.plist"))
    /// store["volume"] = 0.8
    /// try await store.flush()
    /// ```
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - format: the format for a new file (an existing file keeps its own).
    ///   - autosaveDelay: how long after a change to save, or `nil` to save only on ``flush()``
    ///     (and at exit).
    ///   - externalChanges: how changes made to the file elsewhere are noticed.
    ///   - options: lock timeout, size limit and the handling of malformed files.
    public static func file(
        _ url: URL, format: PlistFormat = .xml, autosaveDelay: Duration? = .milliseconds(50),
        externalChanges: ExternalChanges = .automatic, options: PersistenceOptions = PersistenceOptions()
    ) -> SettingsStore {
        var options = options
        options.autosaveDelay = autosaveDelay
        options.externalChanges = externalChanges
        return SettingsStore(url: url, format: format, persistence: options)
    }
}
