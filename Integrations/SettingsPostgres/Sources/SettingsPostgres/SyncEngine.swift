import Foundation
import Logging
import PostgresNIO
import Settings
import SettingsPlist
import SettingsFiles
import Synchronization

/// A failure that ends a connection.
struct SyncConnectionError: Error, CustomStringConvertible {
    var description: String
}

/// The sync loop of one ``SettingsSync/run()``. Not shared: only the run task touches it.
final class SyncEngine {
    let sync: SettingsSync
    let store: SettingsStore
    var events: AsyncStream<SyncEvent>.Iterator
    let storage: SyncStateStorage
    var state: SyncStateFile
    var generation = 0
    var reportedRows: Set<String> = []
    var reportedLimits: Set<String> = []
    var lastCheckIn = ContinuousClock.now - .seconds(3600)
    /// Stored sizes of leaves by path, valid while the digest matches (the space total).
    var sizes: [String: (digest: Int64, size: Int)] = [:]
    /// Paths known to be secret or not (``isSecret(_:)``).
    var secretPaths: [String: Bool] = [:]
    /// Pending secret changes this run does not push (no key, or the server's value sealed with
    /// another key): they stay pending for a later run, or until they change.
    var heldBack: Set<String> = []
    /// During a full download after a purge: synced leaves not (yet) seen in it.
    var resyncUnseen: Set<String>?
    /// The state changed since it was last saved, and nothing needs it durable yet: a pull's
    /// cursor and synced markers (``pullAll(_:)``) wait for the next save (the next apply's, a
    /// push's, a tick's, or the end of the run).
    var stateUnsaved = false
    let logger: Logger

    init(sync: SettingsSync, events: AsyncStream<SyncEvent>) {
        self.sync = sync
        self.store = sync.store
        self.events = events.makeAsyncIterator()
        self.storage = SyncStateStorage(url: sync.stateFileURL)
        self.logger = sync.logger
        self.state = SyncStateFile(app: sync.app, device: UUID())
    }

    var me: UUID { state.device }

    // MARK: Clock

    var nowMs: Int64 { sync.localNowMs() + state.clockOffsetMs }

    /// A new write's clock: `max(last + 1, now << 16)`, or from the time the change happened
    /// (`unixMs`, this machine's clock, corrected by the server offset).
    func tick(at unixMs: Int64? = nil) -> Int64 {
        let ms = unixMs.map { $0 + state.clockOffsetMs } ?? nowMs
        let next = max(state.lastHLC + 1, ms << 16)
        state.lastHLC = next
        return next
    }

    func receive(_ hlc: Int64) {
        state.lastHLC = max(state.lastHLC, hlc)
    }

    // MARK: Run

    func run() async {
        // 1. One syncing process per file.
        var fileLock: PlistFile.Lock?
        while !Task.isCancelled {
            do {
                fileLock = try SyncFileLock.tryAcquire(sync.lockFileURL)
                if fileLock != nil { break }
                sync.setStatus(.standby)
                sync.failWaiters(.standby)
            } catch {
                let reason = "\(error)"
                sync.setStatus(.offline(reason: reason))
                sync.failWaiters(.offline(reason: reason))
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        guard let fileLock else { return }
        defer { fileLock.release() }
        sync.setStatus(.connecting)

        // 2. Hear every local change from now on, then read the state and compare with the file.
        let observation = store.onUserLayerChange { [weak sync] change in
            guard change.origin != .sync, let sync else { return }
            sync.noteLocal(change.keys)
        }
        defer { observation.cancel() }
        await loadState()
        sync.setDevice(state.device)
        reconcileApplying()
        processDirty([:], full: true)
        warnAboutKeysThatLookSecret()
        try? await saveState()

        // 3. A tick every second drives keep-alives and timeouts.
        let ticker = Task { [weak sync] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let sync, sync.queueTick() else { return }
            }
        }
        defer { ticker.cancel() }

        // 4. Connect, sync, reconnect with backoff.
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            sync.setStatus(.connecting)
            do {
                try await session { backoff = .milliseconds(100) }
            } catch {
                logger.info("session ended: \(Self.describe(error))")
                if Task.isCancelled { break }
                let reason = Self.describe(error)
                sync.setStatus(.offline(reason: reason))
                sync.failWaiters(.offline(reason: reason))
            }
            let jitter = Double.random(in: 0.8...1.2)
            try? await Task.sleep(for: backoff * jitter)
            backoff = min(backoff * 2, .seconds(2))
        }
        try? await saveStateIfUnsaved()   // what the last pulls moved (their data is durable already)
    }

    func loadState() async {
        let storage = self.storage
        let loaded: SyncStateFile?
        do {
            loaded = try await BlockingIO.run { try storage.load() }
        } catch {
            // Outside input: a corrupt or planted state file costs a full pull as a new device, never a crash.
            logger.warning("\(error); starting over as a new device (a full pull)")
            loaded = nil
        }
        let machine = sync.machineID()
        defer { state.machine = machine }
        guard let loaded, loaded.format == 1 else { return }
        if loaded.app == sync.app {
            state = loaded
        } else {
            state = SyncStateFile(app: sync.app, device: loaded.device)  // another space: start over
            state.secretLeaves = loaded.secretLeaves                       // the file's secrets stay secret
        }
        // A configuration directory copied to another machine: that machine is a new device.
        if let was = loaded.machine, let machine, was != machine {
            let old = state.device
            state.device = UUID()
            for (path, reg) in state.leaves where reg.device == old && reg.state == .pending {
                state.leaves[path]?.device = state.device
            }
            logger.info("machine id changed: new device id \(state.device)")
        }
    }

    func saveState() async throws {
        let storage = self.storage, snapshot = state
        try await BlockingIO.run { try storage.save(snapshot) }
        stateUnsaved = false
    }

    /// Saves the state when a pull left it unsaved (``stateUnsaved``).
    func saveStateIfUnsaved() async throws {
        if stateUnsaved { try await saveState() }
    }

    // MARK: Local changes

    /// `applying` leaves left by a crash: applied (the value is the target's), not applied (the
    /// value is the previous one: the row is pulled again, since the cursor did not move), or
    /// edited since (pending).
    func reconcileApplying() {
        for (path, reg) in state.leaves where reg.state == .applying {
            let current = LeafDigest.of(leafValue(SettingsKey(path)))
            if current == reg.digest {
                state.leaves[path] = LeafRegister(hlc: reg.hlc, device: reg.device, digest: reg.digest, state: .synced)
            } else if current == reg.prevDigest, let h = reg.prevHLC, let d = reg.prevDevice, let s = reg.prevState {
                if reg.prevExists == false {
                    state.leaves[path] = nil
                } else {
                    state.leaves[path] = LeafRegister(hlc: h, device: d, digest: reg.prevDigest, state: s)
                }
            } else {
                state.leaves[path] = LeafRegister(hlc: tick(), device: me, digest: current, state: .pending)
            }
        }
    }

    /// The user-layer value of a leaf; a dictionary there counts as absent.
    func leafValue(_ key: SettingsKey) -> PlistValue? {
        let v = store.value(for: key, in: .user)
        if case .dictionary = v { return nil }
        return v
    }

    /// Compares the changed keys (stamped with the time they changed) and, when `full`, every
    /// user-layer leaf and every known leaf, with their registers: a changed digest makes the
    /// leaf pending with a fresh clock.
    func processDirty(_ changed: [SettingsKey: Int64], full: Bool) {
        func check(_ key: SettingsKey, _ value: PlistValue?, at unixMs: Int64?) {
            guard sync.scope.includes(key), sync.secrets.keyBytes != nil || !isSecret(key) else { return }
            let digest = LeafDigest.of(value)
            if let reg = state.leaves[key.path] {
                if reg.state == .applying || reg.digest == digest { return }
            } else if digest == nil {
                return
            }
            state.leaves[key.path] = LeafRegister(hlc: tick(at: unixMs), device: me, digest: digest, state: .pending)
            heldBack.remove(key.path)
        }
        for (key, ms) in changed.sorted(by: { $0.value < $1.value }) { check(key, leafValue(key), at: ms) }
        guard full else { return }
        var seen: Set<String> = []
        forEachLeaf(store.contents(of: .user)) { key, value in
            seen.insert(key.path)
            check(key, value, at: nil)
        }
        // A settings file that could not be read looks empty: its leaves did not vanish, so
        // they must not become deletions on every device.
        guard store.loadError == nil else { return }
        for path in state.leaves.keys where !seen.contains(path) {
            let key = SettingsKey(path)
            check(key, leafValue(key), at: nil)
        }
    }

    var hasPending: Bool { state.leaves.contains { $0.value.state == .pending && !heldBack.contains($0.key) } }

    /// Warns (log and ``SettingsSync/problems``) about each key that syncs in clear but is named
    /// like it may hold a secret (``Settings/SettingsSecrets/mayBeSecretName(_:)``): once per key
    /// and run, at start (issue 30, item 2).
    func warnAboutKeysThatLookSecret() {
        forEachLeaf(store.contents(of: .user)) { key, _ in
            guard sync.scope.includes(key), !isSecret(key), key.components.contains(where: SettingsSecrets.mayBeSecretName) else { return }
            logger.warning("\(key.path) syncs in clear but is named like a secret: mark it with secrets: .marking([.secret(...)]) if it is one")
            sync.report(.looksSecret(key: key.path))
        }
    }
}
