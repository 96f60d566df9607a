#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
import Synchronization

extension SettingsStore {
    /// The program's store: `$XDG_CONFIG_HOME/<executable name>/settings.plist` (`~/.config` when
    /// the variable is unset). `@Setting`s without a `store:` use it.
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
    /// - Parameter application: the application (or domain) name.
    public static func defaultFileURL(application: String) -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = URL(filePath: xdg, directoryHint: .isDirectory)
        } else {
            let home = URL(filePath: environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path,
                           directoryHint: .isDirectory)
            base = home.appending(path: ".config", directoryHint: .isDirectory)
        }
        return base.appending(path: application, directoryHint: .isDirectory).appending(path: "settings.plist")
    }

    /// A store whose user layer is kept in the plist file at `url`. An existing file is read now
    /// (in its own format); a file that cannot be parsed is reported and left untouched, and the
    /// store starts empty.
    ///
    /// ```swift
    /// let store = SettingsStore.file(URL(filePath: "/tmp/demo/settings.plist"))
    /// ```
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - format: the format for a new file.
    public static func file(_ url: URL, format: PlistFormat = .xml) -> SettingsStore {
        var fileFormat = format
        var values = PlistDictionary()
        if let data = try? Data(contentsOf: url) {
            fileFormat = PlistFormat.detect(data)
            do {
                let value = try PlistValue(decoding: data)
                if let dict = value.dictionaryValue {
                    values = dict
                } else {
                    SettingsDiagnostics.report(SettingsDiagnostic(.fileError, "\(url.path): the root is a \(value.typeName), expected a dict; starting empty"))
                }
            } catch {
                SettingsDiagnostics.report(SettingsDiagnostic(.fileError, error.inFile(url.path).description + "; starting empty"))
            }
        }
        let store = SettingsStore(url: url, format: fileFormat)
        store.state.withLock { s in
            s.modify(.user) { $0 = values }
            s.tracksChanges = true
        }
        return store
    }

    /// Writes the user layer to the store's file if anything changed (atomically: a temporary
    /// file renamed over the target). Does nothing for an in-memory store.
    ///
    /// - Throws: ``SettingsError`` with code ``SettingsError/Code/invalidFile`` naming the file.
    public func flush() throws(SettingsError) {
        guard let url else { return }
        let snapshot: PlistDictionary? = state.withLock { s in
            guard !s.dirty.isEmpty else { return nil }
            s.dirty.removeAll()
            return s[.user]
        }
        guard let snapshot else { return }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw SettingsError(.invalidFile, path: url.path, detail: "cannot create its directory: \(error)")
        }
        do {
            try PlistValue.dictionary(snapshot).write(to: url, format: format)
        } catch {
            throw SettingsError(.invalidFile, path: url.path, underlying: error)
        }
    }
}
