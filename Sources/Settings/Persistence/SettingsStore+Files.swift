#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// How a file store notices changes made to its file by other processes or by hand.
    public enum ExternalChanges: Hashable, Sendable {
        /// inotify on Linux (the file's directory is watched, so replacing the file by rename is
        /// seen too), polling every second where inotify is not available.
        case automatic
        /// Looks at the file's identity (inode, size, modification time) at this interval.
        case polling(Duration)
        /// Changes made elsewhere are picked up only when this process saves.
        case ignored
    }

    /// A store whose user layer is kept in the plist file at `url`.
    ///
    /// The file is read now, in its own format. A missing file is an empty store (the file and
    /// its directories are created, owner-only, at the first save). A file that cannot be parsed
    /// is moved aside to `settings.plist.corrupt-<timestamp>`, never overwritten, and the store
    /// starts from the defaults; a file that cannot be read (permissions) is left alone and
    /// never written. Both are reported to ``SettingsDiagnostics/handler`` and kept in
    /// ``loadError``.
    ///
    /// Changes are saved `autosaveDelay` after the first change of a burst (a burst of writes
    /// becomes one file write) and by ``flush()``, which returns when they are on disk. Each save
    /// takes an advisory lock, reads what other processes wrote since, and writes only the keys
    /// this process changed on top of it, so concurrent writers lose nothing.
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
    ///   - autosaveDelay: how long after a change to save, or `nil` to save only on ``flush()``.
    ///   - externalChanges: how changes made to the file elsewhere are noticed.
    public static func file(
        _ url: URL, format: PlistFormat = .xml, autosaveDelay: Duration? = .milliseconds(50),
        externalChanges: ExternalChanges = .automatic
    ) -> SettingsStore {
        let store = SettingsStore(url: url, format: format, autosaveDelay: autosaveDelay)
        let values = store.file?.load() ?? PlistDictionary()
        store.state.locked { s in
            s.modify(.user) { $0 = values }
            s.tracksChanges = true
            s.autosaves = autosaveDelay != nil
        }
        ExitFlusher.register(store)
        switch externalChanges {
        case .automatic: FileWatcher.shared.watch(store, pollingInterval: .seconds(1))
        case .polling(let interval): FileWatcher.shared.poll(store, every: interval)
        case .ignored: break
        }
        return store
    }

    /// Writes every change made so far to the file and returns when it is durable (written,
    /// flushed to disk, renamed into place, directory flushed). Does nothing for an in-memory
    /// store or when nothing changed.
    ///
    /// ```swift
    /// settings.volume = 0.8
    /// try await SettingsStore.shared.flush()   // on disk now
    /// ```
    ///
    /// - Throws: ``SettingsError`` with code ``SettingsError/Code/invalidFile`` naming the file
    ///   and the reason (its directory cannot be created, the disk is full, permission denied,
    ///   or the file could not be read when the store was opened and so is left alone). The
    ///   unsaved changes are kept and saved by a later flush.
    public func flush() throws(SettingsError) {
        try saveNow()
    }

    /// ``flush()`` for synchronous code: writes every change made so far and returns when it is
    /// durable, blocking the calling thread meanwhile.
    ///
    /// ```swift
    /// try store.flushNow()   // e.g. from a signal handler's clean-up path or a synchronous shutdown hook
    /// ```
    ///
    /// - Throws: ``SettingsError`` as ``flush()`` does.
    public nonisolated func flushNow() throws(SettingsError) {
        try saveNow()
    }

    /// The problem found when the file was loaded: malformed (and moved aside) or unreadable.
    /// `nil` when it loaded cleanly or did not exist.
    public nonisolated var loadError: SettingsError? {
        file?.state.locked { $0.loadError }
    }

    /// Counters and findings of the store's file persistence.
    public struct PersistenceStatus: Hashable, Sendable {
        /// Files written by this process (each a whole, atomic, durable replacement).
        public var fileWrites: Int
        /// Times the file was reloaded after a change made elsewhere.
        public var reloads: Int
        /// Where a malformed file was moved, if it was.
        public var movedAside: URL?
        /// Changes not yet written.
        public var hasUnsavedChanges: Bool
    }

    /// What the store's persistence has done so far.
    ///
    /// ```swift
    /// store.persistenceStatus.fileWrites    // 1 after a burst of 10,000 writes and a flush
    /// ```
    public nonisolated var persistenceStatus: PersistenceStatus {
        let unsaved = state.locked { !$0.dirty.isEmpty }
        let file = file?.state.locked { ($0.writes, $0.reloads, $0.movedAside) }
        return PersistenceStatus(fileWrites: file?.0 ?? 0, reloads: file?.1 ?? 0, movedAside: file?.2, hasUnsavedChanges: unsaved)
    }

    // MARK: Internals

    /// Saves pending changes now, on the calling thread.
    nonisolated func saveNow() throws(SettingsError) {
        guard let file else { return }
        let announcement = try file.save(
            snapshot: {
                state.locked { s in
                    defer { s.dirty.removeAll(keepingCapacity: true) }
                    return (s[.user], s.dirty)
                }
            },
            restore: { keys in state.locked { s in s.dirty.insert(contentsOf: keys, at: 0) } },
            reconcile: { contents in adopt(contents) }
        )
        (announcement ?? nil)?.deliver(in: self)
    }

    /// Starts a save after the autosave delay (once per burst of changes).
    nonisolated func scheduleSave() {
        guard let delay = autosaveDelay else { return }
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard let self else { return }
            state.locked { $0.saveScheduled = false }
            do {
                try saveNow()
            } catch {
                SettingsDiagnostics.report(SettingsDiagnostic(.fileError, "\(error)"))
            }
        }
    }

    /// Looks at the file and, when another process or a person changed it, reloads it and
    /// announces the keys whose effective values changed. Called by the file watcher.
    nonisolated func reloadIfChanged() {
        guard let file else { return }
        (file.reloadIfChanged(reconcile: { adopt($0) }) ?? nil)?.deliver(in: self, origin: .externalFile)
    }

    /// A change to announce once the locks are released.
    struct Announcement {
        var changed: [SettingsKey]
        var keyPaths: TrackedKeyPaths
        var observing: Bool

        func deliver(in store: SettingsStore, origin: SettingsChange.Origin = .externalFile) {
            store.announce(keyPaths)
            if observing { store.publish(changed, origin: origin) }
        }
    }

    /// Makes the user layer what the file holds, with this process's unsaved changes on top.
    /// Called under the file's lock; returns what to announce after it.
    nonisolated func adopt(_ contents: PlistDictionary) -> Announcement? {
        let observing = observers.isActive
        let result = state.locked { s -> Announcement? in
            var user = contents
            for key in s.dirty {
                _ = user.setValue(s[.user].value(at: key.components), at: key.components[...])
            }
            guard user != s[.user] else { return nil }
            let before = s
            s.modify(.user) { $0 = user }
            guard observing || !s.tracked.isEmpty else { return Announcement(changed: [], keyPaths: TrackedKeyPaths(), observing: false) }
            let changed = s.effectiveChanges(from: before, in: .user)
            return Announcement(changed: changed, keyPaths: s.trackedKeyPaths(for: .keys(changed), writing: SettingsKey(components: [])),
                                observing: observing)
        }
        if result != nil { generationCounter.add(1, ordering: .releasing) }
        return result
    }
}

/// Saves every file store's unsaved changes when the process exits normally (`exit()` or the
/// end of `main`), so a quick program loses nothing it set. A crash or `SIGKILL` skips this:
/// what `flush()` returned for is on disk regardless.
enum ExitFlusher {
    private final class WeakStore: Sendable {
        weak let store: SettingsStore?
        init(_ store: SettingsStore) { self.store = store }
    }

    private static let stores = Mutex<[WeakStore]>([])
    private static let installed: Void = {
        atexit {
            let all = ExitFlusher.stores.locked { list in list.compactMap(\.store) }
            for store in all {
                do {
                    try store.saveNow()
                } catch {
                    SettingsDiagnostics.report(SettingsDiagnostic(.fileError, "\(error)"))
                }
            }
        }
    }()

    static func register(_ store: SettingsStore) {
        _ = installed
        stores.locked { list in
            list.removeAll { $0.store == nil }
            list.append(WeakStore(store))
        }
    }
}
