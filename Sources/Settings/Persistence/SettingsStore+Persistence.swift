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
        if unsaved.markDirty(key) { PendingSaves.add(store) }
    }
}

nonisolated extension SettingsStore {
    /// Reads the file at first use, on the store's persistence thread; the caller waits (once).
    func loadFile() {
        guard let backend else { return }
        backend.executor.runAndWait { backend.onThread { self.loadIfNeeded($0) } }
    }

    /// Loads the file if that was not done yet (isolated to the backend; see ``ensureLoaded()``).
    func loadIfNeeded(_ backend: isolated FileBackend) {
        guard !loaded.load(ordering: .acquiring) else { return }
        let contents = backend.file.load()
        let diagnostics = backend.file.diagnostics
        backend.file.diagnostics = []
        let system = readSystemFiles()  // hook (locks): in the same step as the user's file
        values.storage.locked { s in
            s.modify(.user) { $0 = contents }
            if let system { s.layAdministratorFiles(system.layers) }
            s.unsaved.tracksChanges = true
            s.unsaved.autosaves = backend.options.autosaveDelay != nil
            values.generationCounter.add(1, ordering: .releasing)
        }
        publishStatus(backend)
        loaded.store(true, ordering: .releasing)
        moveRenamedKeys(in: .user)  // values under old names move to their new keys
        diagnostics.forEach(report)
        if let system { reportSystemProblems(system.fresh) }
        startWatchingSoon(backend)
    }

    /// Reports what the file found since the last step (after it: a diagnostics handler may
    /// flush, and no lock is held here).
    func deliverFileDiagnostics(_ backend: isolated FileBackend) {
        let pending = backend.file.diagnostics
        backend.file.diagnostics = []
        pending.forEach(report)
    }

    /// One save attempt, on the store's persistence thread: takes the changes made since the
    /// last save (the batch), hands them to the file, and acts on the outcome: the batch given
    /// back when it was not written, the file's new contents adopted and announced when it was.
    func saveOnce(_ backend: isolated FileBackend) throws(SettingsError) -> SaveResult {
        loadIfNeeded(backend)
        let taken = values.storage.locked { s -> SettingsFile.SaveBatch? in
            guard !s.unsaved.isEmpty else { return nil }
            defer { s.unsaved.renameRemovals = [:] }
            return SettingsFile.SaveBatch(values: s[.user], changed: s.unsaved.takeDirty(), removedIfUnchanged: s.unsaved.renameRemovals)
        }
        guard var batch = taken else {
            backend.lockWaiter = nil  // a place in the lock's queue is not needed any more
            releaseIfClean()
            return .nothing
        }
        batch.notes = history?.takeNotes() ?? [:]
        let held = backend.lockWaiter?.take()
        if held != nil { backend.lockWaiter = nil }
        let outcome = backend.file.save(batch, held: held)
        if case .saved = outcome {} else { giveBack(batch) }
        switch outcome {
        case .unchanged:
            releaseIfClean()
            return .nothing
        case .busy(let lock):
            if backend.lockWaiter == nil || backend.lockWaiter?.hasFailed == true {
                backend.lockWaiter = LockWaiter(path: lock, onAcquired: { [weak self] in self?.saveSoon() })
            }
            return .busy(lock: lock)
        case .settling(let wait):
            publishStatus(backend, settling: true)
            deliverFileDiagnostics(backend)
            return .settling(wait)
        case .failed(let error):
            publishStatus(backend, saveError: .some(error))
            deliverFileDiagnostics(backend)
            throw error
        case .saved(let contents):
            backend.lastSave = ContinuousClock.now
            let announcement = adopt(contents)
            // After the first save (the companion directory exists by then): the manifest records
            // this program's history limits for the tool, and any earlier program's are replaced.
            if !backend.manifestChecked {
                backend.manifestChecked = true
                writeLayersManifest()
            }
            publishStatus(backend, saveError: .some(nil))
            releaseIfClean()
            deliverFileDiagnostics(backend)
            deliver(announcement)
            return .saved
        }
    }

    /// Gives a batch that was not written back to the store, before any change made since.
    private func giveBack(_ batch: SettingsFile.SaveBatch) {
        values.storage.locked { s in
            s.unsaved.restoreDirty(batch.changed)
            s.unsaved.renameRemovals.merge(batch.removedIfUnchanged) { current, _ in current }
        }
        history?.restore(notes: batch.notes)
    }

    /// Lets the store go from ``PendingSaves`` when it has no unsaved changes.
    func releaseIfClean() {
        values.storage.locked { s in
            guard s.unsaved.pending, s.unsaved.isEmpty else { return }
            s.unsaved.pending = false
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
    /// announces the keys whose effective values changed (on the store's persistence thread:
    /// the file watcher asks for it with ``reloadSoon()``).
    func reloadIfChanged(_ backend: isolated FileBackend) {
        guard loaded.load(ordering: .acquiring) else { return }
        var announcement: Announcement?
        if let changed = backend.file.reloadIfChanged() { announcement = adopt(changed) }
        publishStatus(backend)
        deliverFileDiagnostics(backend)
        deliver(announcement)
        moveRenamedKeys(in: .user)  // an older program may have written an old name
        reloadSystemFiles()  // hook (locks): the administrator's files, looked at with the user's
    }

    /// Looks at the file on the store's persistence thread, without waiting (see
    /// ``reloadIfChanged(_:)``).
    func reloadSoon() {
        guard let backend else { return }
        backend.executor.submit { [weak self] in
            guard let self else { return }
            backend.onThread { self.reloadIfChanged($0) }
        }
    }

    /// Starts watching the file for changes made elsewhere a moment after it was loaded: a
    /// program that reads a value and exits never pays for a watch (an inotify instance makes
    /// the kernel wait several milliseconds at exit). Changes made before the watch starts are
    /// found when it does.
    func startWatchingSoon(_ backend: isolated FileBackend) {
        let mode = backend.options.externalChanges
        guard mode != .ignored else { return }
        backend.executor.schedule(after: .milliseconds(150)) { [weak self] in
            guard let self else { return }
            backend.onThread { self.startWatching(mode, $0) }
        }
    }

    /// Watches the file, then looks at it once: a change made before the watch was in place
    /// (since the load, or while the watch was being set up, whose events find no store yet) is
    /// found by the look, and every later one by the watch. Looked at first, a change made
    /// between the look and the watch would stay unseen until the next.
    func startWatching(_ mode: ExternalChanges, _ backend: isolated FileBackend) {
        switch mode {
        case .automatic: FileWatcher.shared.watch(self, path: backend.file.targetPath, pollingInterval: .seconds(1))
        case .polling(let interval): FileWatcher.shared.poll(self, every: interval)
        case .ignored: break
        }
        reloadIfChanged(backend)
    }

    /// Makes the user layer what the file holds, with this process's unsaved changes on top.
    /// Returns what to announce (as a change made elsewhere) once no lock is held.
    func adopt(_ contents: PlistDictionary) -> Announcement? {
        commit(.user, origin: .externalFile) { s, audience in
            var user = contents
            for key in s.unsaved.dirty {
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

extension SettingsStore {
    /// Loads the file if that was not done yet, then looks at it for changes made elsewhere
    /// (awaited: runs on the store's persistence thread).
    static func reload(_ store: SettingsStore, _ backend: isolated FileBackend) {
        store.loadIfNeeded(backend)
        store.reloadIfChanged(backend)
    }
}
