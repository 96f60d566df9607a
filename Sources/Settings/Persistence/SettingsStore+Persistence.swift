#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The result of one save attempt, without the announcement (already delivered).
enum SaveResult: Sendable {
    case nothing, saved
    /// Another process holds the lock at this path.
    case busy(lock: String)
    case settling(Duration)
}

extension SettingsStore.State {
    /// Records a changed user key and, when the store just gained unsaved changes, keeps it alive
    /// (in ``PendingSaves``) until they are saved.
    mutating func markDirtyKeepingAlive(_ key: SettingsKey, store: SettingsStore) {
        if markDirty(key) { PendingSaves.add(store) }
    }
}

nonisolated extension SettingsStore {
    /// Reads the file at first use, on the store's executor; the caller waits (once).
    func loadFile() {
        guard backend != nil else { return }
        executor.runAndWait { self.loadIfNeeded() }
    }

    /// Loads the file if that was not done yet (on the store's executor; see ``ensureLoaded()``).
    func loadIfNeeded() {
        guard !loaded.load(ordering: .acquiring), let backend else { return }
        let (contents, diagnostics) = backend.withFile { file in
            file.onLockAcquired = { [weak self] in self?.saveSoon() }
            let contents = file.load()
            defer { file.diagnostics = [] }
            return (contents, file.diagnostics)
        }
        let system = readSystemFiles()  // hook (locks): in the same step as the user's file
        values.storage.locked { s in
            s.modify(.user) { $0 = contents }
            if let system { s.layAdministratorFiles(system.layers) }
            s.tracksChanges = true
            s.autosaves = backend.options.autosaveDelay != nil
            values.generationCounter.add(1, ordering: .releasing)
        }
        publishStatus()
        loaded.store(true, ordering: .releasing)
        moveRenamedKeys(in: .user)  // values under old names move to their new keys
        diagnostics.forEach(report)
        if let system { reportSystemProblems(system.fresh) }
        startWatchingSoon()
    }

    /// Reports what the file found since the last step (never from inside ``FileBackend/withFile(_:)``:
    /// a diagnostics handler may flush).
    func deliverFileDiagnostics() {
        guard let backend else { return }
        let pending = backend.withFile { file in
            defer { file.diagnostics = [] }
            return file.diagnostics
        }
        pending.forEach(report)
    }

    /// One save attempt, on the store's executor: saves pending changes if the lock is free and
    /// the file is usable.
    func saveOnce() throws(SettingsError) -> SaveResult {
        loadIfNeeded()
        guard let backend else { return .nothing }
        let hasChanges = values.storage.locked { !$0.dirty.isEmpty }
        let step: SettingsFile.SaveStep<Announcement?>
        do {
            step = try backend.withFile { (file: inout SettingsFile) throws(SettingsError) in
                try file.save(
                    hasChanges: hasChanges,
                    snapshot: {
                        values.storage.locked { s in
                            defer { s.renameRemovals = [:] }
                            return SettingsFile.SaveBatch(values: s[.user], changed: s.takeDirty(), removedIfUnchanged: s.renameRemovals)
                        }
                    },
                    restore: { batch in
                        values.storage.locked { s in
                            s.restoreDirty(batch.changed)
                            s.renameRemovals.merge(batch.removedIfUnchanged) { current, _ in current }
                        }
                        history?.restore(notes: batch.notes)
                    },
                    reconcile: { contents in adopt(contents) }
                )
            }
        } catch {
            publishStatus(saveError: .some(error))
            deliverFileDiagnostics()
            throw error
        }
        switch consume step {
        case .nothing:
            releaseIfClean()
            return .nothing
        case .busy(let lock):
            return .busy(lock: lock)
        case .settling(let wait):
            publishStatus(settling: true)
            deliverFileDiagnostics()
            return .settling(wait)
        case .saved(let announcement):
            // After the first save (the companion directory exists by then): the manifest records
            // this program's history limits for the tool, and any earlier program's are replaced.
            if !backend.manifestChecked.exchange(true, ordering: .relaxed) { writeLayersManifest() }
            publishStatus(saveError: .some(nil))
            releaseIfClean()
            deliverFileDiagnostics()
            deliver(announcement)
            return .saved
        }
    }

    /// Lets the store go from ``PendingSaves`` when it has no unsaved changes.
    func releaseIfClean() {
        values.storage.locked { s in
            guard s.pending, s.dirty.isEmpty else { return }
            s.pending = false
            PendingSaves.remove(self)
        }
    }

    /// Reports that the store's persistence thread could not be started (its work runs on a
    /// borrowed Dispatch worker meanwhile; see ``PersistenceExecutor``).
    func reportThreadFailure(_ error: Int32) {
        let reason = String(cString: strerror(error))
        report(SettingsDiagnostic(.fileError, "\(url?.path ?? "?"): cannot start the settings persistence thread (\(reason)); the file is loaded and saved on a shared worker thread until one can be started"))
    }

    /// Looks at the file and, when another process or a person changed it, reloads it and
    /// announces the keys whose effective values changed. Called by the file watcher, on the
    /// store's executor.
    func reloadIfChanged() {
        guard loaded.load(ordering: .acquiring), let backend else { return }
        let announcement = backend.withFile { file in file.reloadIfChanged(reconcile: { adopt($0) }) }
        publishStatus()
        deliverFileDiagnostics()
        if let announcement = consume announcement { deliver(announcement) }
        moveRenamedKeys(in: .user)  // an older program may have written an old name
        reloadSystemFiles()  // hook (locks): the administrator's files, looked at with the user's
    }

    /// Looks at the file on the store's executor, without waiting (see ``reloadIfChanged()``).
    func reloadSoon() {
        executor.submit { [weak self] in self?.reloadIfChanged() }
    }

    /// Starts watching the file for changes made elsewhere a moment after it was loaded: a
    /// program that reads a value and exits never pays for a watch (an inotify instance makes
    /// the kernel wait several milliseconds at exit). Changes made before the watch starts are
    /// found when it does.
    func startWatchingSoon() {
        guard let mode = persistence?.externalChanges, mode != .ignored else { return }
        executor.schedule(after: .milliseconds(150)) { [weak self] in self?.startWatching(mode) }
    }

    /// Looks at the file once, then watches it (on the store's executor).
    func startWatching(_ mode: ExternalChanges) {
        reloadIfChanged()
        switch mode {
        case .automatic:
            guard let path = backend?.withFile({ $0.targetPath }) else { return }
            FileWatcher.shared.watch(self, path: path, pollingInterval: .seconds(1))
        case .polling(let interval): FileWatcher.shared.poll(self, every: interval)
        case .ignored: break
        }
    }

    /// Makes the user layer what the file holds, with this process's unsaved changes on top.
    /// Returns what to announce (as a change made elsewhere) once no lock is held.
    func adopt(_ contents: PlistDictionary) -> Announcement? {
        commit(.user, origin: .externalFile) { s, audience in
            var user = contents
            for key in s.dirty {
                _ = user.setValue(s[.user].value(at: key.components), at: key.components[...])
            }
            guard user != s[.user] else { return .unchanged }
            let before = audience.comparing ? s.layers : nil
            let userBefore = audience.userLayer ? s[.user] : nil
            s.modify(.user) { $0 = user }
            return .layer(before: before, userBefore: userBefore)
        }
    }
}

// Isolated to the actor: its executor is the store's persistence thread, so these run there.
extension SettingsStore {
    /// ``reload()`` on the store's executor.
    func reloadOnExecutor() {
        loadIfNeeded()
        reloadIfChanged()
    }
}
