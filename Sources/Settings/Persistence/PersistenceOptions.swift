#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
public import SettingsFiles

/// How a file store keeps its file: when it saves, how long it waits for other processes, and
/// what it refuses to read.
///
/// ```swift
/// let store = SettingsStore.file(url, options: PersistenceOptions(lockTimeout: .seconds(5)))
/// ```
public struct PersistenceOptions: Hashable, Sendable {
    /// How long ``SettingsStore/flush()``, ``SettingsStore/flushNow()`` and the save at exit
    /// wait for another process to release the file's lock before giving up with
    /// ``SettingsError/Code/fileLocked`` (the changes are kept and autosaves keep retrying).
    public var lockTimeout: Duration
    /// The largest settings file read, in bytes: a larger one (or a sparse file claiming to be)
    /// is refused with an error naming the file and both sizes, and never written over.
    public var maximumFileSize: Int
    /// How long a malformed file must stay unchanged before a save moves it aside (an editor
    /// rewriting the file in place is given this long to finish).
    public var settleDelay: Duration
    /// How many `settings.plist.corrupt-*` files are kept beside a settings file (the oldest
    /// beyond this are removed).
    public var quarantineLimit: Int
    /// How many saved versions (generations) of the file are kept in its history (0 keeps none;
    /// see ``SettingsStore/history()``).
    public var historyLimit: Int
    /// The most bytes the file's history may take (the newest generation is always kept).
    public var historyByteBudget: Int
    /// Which administrator's files the store reads: system defaults and locked keys (see
    /// ``SystemFiles``). By default, those of the application whose default file the store keeps.
    public var systemFiles: SystemFiles = .automatic

    /// Which administrator's files a file store reads: `<dir>/<app>/settings.plist` (the
    /// ``SettingsLayer/system`` layer) and `<dir>/<app>/locked.plist` (the
    /// ``SettingsLayer/locked`` layer) in each system directory.
    ///
    /// ```swift
    /// var options = PersistenceOptions()
    /// options.systemFiles = .application("MyApp", directories: .fixed(["/etc/xdg"]))  // pinned
    /// let store = SettingsStore.file(url, options: options)
    /// ```
    public struct SystemFiles: Hashable, Sendable {
        /// The application whose files are read (`nil`: worked out from the store's file).
        public var application: String?
        /// Where they are read from.
        public var directories: PlistSystemLayers.SystemDirectories

        /// A store whose file is an application's default file
        /// (``SettingsStore/defaultFileURL(application:)``, as ``SettingsStore/shared`` has)
        /// reads that application's files from `$XDG_CONFIG_DIRS` (default `/etc/xdg`), and locks
        /// from `/etc/xdg` whatever the variable says; any other file store reads none.
        public static let automatic = SystemFiles(application: nil, directories: .environment)
        /// No system defaults and no locks.
        public static let none = SystemFiles(application: nil, directories: .none)

        /// The files of `application`, from `directories`.
        ///
        /// - Parameters:
        ///   - application: the application (domain) name.
        ///   - directories: `.environment` (the default), or `.fixed([...])` to pin them.
        public static func application(_ application: String, directories: PlistSystemLayers.SystemDirectories = .environment) -> SystemFiles {
            SystemFiles(application: application, directories: directories)
        }
    }

    /// Creates options; every parameter has the default a settings file wants.
    ///
    /// - Parameters:
    ///   - lockTimeout: the longest wait for another process's lock (default 2 s).
    ///   - maximumFileSize: the largest file read (default `PlistFile.maximumSize`, 64 MiB,
    ///     the limit the `settings` tool keeps too).
    ///   - settleDelay: how long a malformed file must stay as it is before it is moved aside (default 200 ms).
    ///   - quarantineLimit: how many moved-aside files are kept (default 3).
    ///   - historyLimit: how many generations of the file are kept (default 20; 0 keeps none).
    ///   - historyByteBudget: the most bytes they may take (default 16 MiB).
    public init(
        lockTimeout: Duration = .seconds(2), maximumFileSize: Int = PlistFile.maximumSize,
        settleDelay: Duration = .milliseconds(200), quarantineLimit: Int = 3,
        historyLimit: Int = 20, historyByteBudget: Int = 16 << 20
    ) {
        self.historyLimit = max(0, historyLimit)
        self.historyByteBudget = max(0, historyByteBudget)
        self.lockTimeout = lockTimeout
        self.maximumFileSize = maximumFileSize
        self.settleDelay = settleDelay
        self.quarantineLimit = max(1, quarantineLimit)
    }

    /// How long after a change the file is saved (`nil`: only on ``SettingsStore/flush()``).
    var autosaveDelay: Duration? = .milliseconds(50)
    /// How changes made elsewhere are noticed.
    var externalChanges: SettingsStore.ExternalChanges = .automatic
}
