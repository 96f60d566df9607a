#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles
import Synchronization

// The administrator's half: system defaults (`<dir>/<app>/settings.plist`) and locked keys
// (`<dir>/<app>/locked.plist`), read with the user's file, watched as it is, and refusing writes.
nonisolated extension SettingsStore {
    /// Whether `key` may be written: `false` when an administrator locked it (or, for a
    /// namespace, a key inside it) in a `locked.plist`. A locked key's value comes from the lock,
    /// above every other layer (command-line arguments and environment variables included);
    /// writes to it are refused. A change of the locks is announced to observers with origin
    /// ``SettingsChange/Origin/locks``, so `isWritable` can be observed like a value.
    ///
    /// ```swift
    /// if !store.isWritable("Network/proxy") { print("set by your administrator") }
    /// ```
    ///
    /// - Parameter key: the key path.
    public func isWritable(_ key: SettingsKey) -> Bool {
        lockingFile(of: key) == nil
    }

    /// The locks file that locks `key` (see ``isWritable(_:)``), or `nil` when it is writable.
    ///
    /// - Parameter key: the key path.
    public func lockingFile(of key: SettingsKey) -> String? {
        withState { s in s[.locked].isEmpty ? nil : s.system.lockingFile(of: key.components) }
    }

    /// The application whose administrator's files the store reads, or `nil` for none
    /// (``PersistenceOptions/SystemFiles``).
    var systemApplication: String? {
        guard let url, let options = persistence?.systemFiles, options.directories != .none else { return nil }
        if let application = options.application { return application }
        let application = PlistFile.name(of: PlistFile.directory(of: url.path))
        guard !application.isEmpty, url.standardizedFileURL == Self.defaultFileURL(application: application).standardizedFileURL else { return nil }
        return application
    }

    /// Reads the administrator's files (on the store's executor); `nil` when the store reads
    /// none. `fresh`: the problems not reported yet (each is reported once while it lasts).
    func readSystemFiles() -> (layers: PlistSystemLayers, fresh: [String])? {
        guard let backend, let application = systemApplication else { return nil }
        let options = backend.options
        let system = PlistSystemLayers.load(application: application, from: options.systemFiles.directories, limit: options.maximumFileSize)
        let fresh = backend.reportedSystemProblems.locked { reported -> [String] in
            defer { reported = Set(system.problems) }
            return system.problems.filter { !reported.contains($0) }
        }
        return (system, fresh)
    }

    /// Reports files of the administrator's that do not count.
    func reportSystemProblems(_ problems: [String]) {
        for problem in problems {
            report(SettingsDiagnostic(.fileError, problem))
        }
    }

    /// Reads the administrator's files again and lays them into the ``SettingsLayer/system`` and
    /// ``SettingsLayer/locked`` layers, announcing what changed with origins
    /// ``SettingsChange/Origin/systemDefaults`` and ``SettingsChange/Origin/locks`` (on the
    /// store's executor, whenever the watcher sees a change), and watches their directories.
    func reloadSystemFiles() {
        guard loaded.load(ordering: .acquiring), let (read, fresh) = readSystemFiles(), let application = systemApplication else { return }
        let system = read.keepingLocks(from: values.storage.locked { $0.system })
        let defaults = system.defaults
        let locks = system.locks
        deliver(commit(.system, origin: .systemDefaults, loadingFile: false) { s, audience in
            s.system = system
            guard s[.system] != defaults else { return .unchanged }
            let before = audience.comparing ? s.layers : nil
            s.modify(.system) { $0 = defaults }
            return .layer(before: before, userBefore: nil)
        })
        deliver(commit(.locked, origin: .locks, loadingFile: false) { s, audience in
            guard s[.locked] != locks else { return .unchanged }
            let before = audience.comparing ? s.layers : nil
            s.modify(.locked) { $0 = locks }
            return .layer(before: before, userBefore: nil)
        })
        reportSystemProblems(fresh)
        watchSystemDirectories(application: application)
    }

    /// Watches the system directories' application directories as the user's file is watched
    /// (the parent system directory when the application's directory does not exist yet).
    private func watchSystemDirectories(application: String) {
        guard let options = persistence, options.externalChanges == .automatic else { return }
        for directory in PlistSystemLayers.applicationDirectories(application: application, from: options.systemFiles.directories) {
            FileWatcher.shared.watchSystem(self, applicationDirectory: directory)
        }
    }

    /// A setting's write to the user layer: the key's effective value just after it (`.some`;
    /// `.some(nil)` unless `resolving`), or `nil` when a lock refused it (reported as a
    /// ``SettingsDiagnostic/Kind/writeRefused`` diagnostic naming the locks file).
    @usableFromInline func writeUserValue(_ value: PlistValue?, for key: SettingsKey, resolving: Bool) -> PlistValue?? {
        let result = change(.user, key: key, to: value, reportingRefusal: true, resolving: resolving)
        return result.refusal == nil ? .some(result.effective) : nil
    }

    /// The refusal of a write of `key` to the user layer, read under the store's lock.
    @inline(__always)  // an empty `locked` layer (the usual case) is one comparison at the write
    static func lockRefusal(_ s: borrowing State, key: SettingsKey) -> PlistLocks.Refusal? {
        s[.locked].isEmpty ? nil : PlistLocks.refusal(changing: key.components, by: s.system)
    }
}

extension SettingsStore.State {
    /// Lays the administrator's files into their layers (at load, with the user's file).
    mutating func layAdministratorFiles(_ files: PlistSystemLayers) {
        system = files
        modify(.system) { $0 = files.defaults }
        modify(.locked) { $0 = files.locks }
    }
}

extension SettingsError {
    /// The error for a write refused by a lock.
    init(_ refusal: PlistLocks.Refusal) {
        self.init(.locked, key: SettingsKey(components: refusal.key), path: refusal.file)
    }
}
