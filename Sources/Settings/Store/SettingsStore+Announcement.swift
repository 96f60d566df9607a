import Observation
import SettingsPlist
import Synchronization

nonisolated extension SettingsStore {
    /// One change to one layer: worked out under the store's lock by ``commit(_:origin:loadingFile:_:)`` (the
    /// one write path: every write, registration, override, migration, sync, save and reload
    /// goes through it) and delivered by ``deliver(_:)`` once the lock is released.
    ///
    /// The parts that cost something to work out are worked out only when someone is told about
    /// them: the effective changes when observers or tracked settings are there, the user layer's
    /// changed leaves when a user-layer observer listens.
    struct Announcement: ~Copyable {
        /// What the change is announced as.
        var origin: SettingsChange.Origin
        /// Whether store or key observers were active when the change was made (read under the
        /// lock: an observer registering meanwhile either sees the change in its initial value
        /// or is counted here; see ``SettingsObservers/add(key:current:onValue:)``).
        var observing = false
        /// The key paths whose effective value changed (when someone observes or tracks them).
        var changed: [SettingsKey] = []
        /// The Observation key paths of tracked settings among them.
        var keyPaths = TrackedKeyPaths()
        /// The user layer's changed leaves (when a user-layer observer listens).
        var userChanges: [SettingsKey] = []
        /// Whether the change asks for an autosave to be scheduled.
        var save = false
    }

    /// Who is told about a change, read under the lock at the start of ``commit(_:origin:loadingFile:_:)``:
    /// an edit works out (and keeps a copy of) only what they need.
    struct Audience {
        /// Store or key observers are active.
        let observing: Bool
        /// Settings are tracked by the Observation framework.
        let tracking: Bool
        /// A user-layer observer listens and the change is to the user layer.
        let userLayer: Bool

        /// Whether the effective changes must be worked out.
        var comparing: Bool { observing || tracking }
    }

    /// What an edit did, for ``commit(_:origin:loadingFile:_:)`` to turn into an ``Announcement``.
    enum Edit {
        /// Nothing changed: nothing is announced and the generation stays.
        case unchanged
        /// The layer changed as a whole (or in several keys). `before`: the layers before, when
        /// the ``Audience`` compares; `userBefore`: the user layer before, when it listens to it.
        case layer(before: SettingsLayers?, userBefore: PlistDictionary?)
        /// One key was written with this effect; `userBefore`: the user layer's value at the
        /// key before (when a user-layer observer listens).
        case key(SettingsKey, WriteEffect, userBefore: PlistValue?)
        /// Several keys were written (a ``SettingsStore/transaction(_:)``): the key paths whose
        /// effective value changed, and the user layer's changed leaves (when listened to).
        case keys(changed: [SettingsKey], userChanges: [SettingsKey])
        /// Something changed that no one in the ``Audience`` hears of (a write of a key no one
        /// observes or tracks): the generation moves and an autosave may be due, nothing more.
        case unheard
    }

    /// Changes the store's state under its lock and works out what to announce: runs `edit`,
    /// then (when it changed anything) bumps the generation.
    ///
    /// - Parameters:
    ///   - layer: the layer `edit` changes.
    ///   - origin: what the change is announced as.
    ///   - loadingFile: whether a file store's file is loaded first when it was not yet (`false`
    ///     only for changes that must not load it: moving renamed keys of other layers).
    ///   - edit: changes the state under the lock, keeping what the ``Audience`` needs.
    /// - Returns: what to ``deliver(_:)`` once no lock is held, or `nil` when nothing changed
    ///   or no one is to be told.
    @inline(__always)  // one write path, without a copy of its result on the way (the single-key write is the hot path)
    func commit(_ layer: SettingsLayer, origin: SettingsChange.Origin, loadingFile: Bool = true,
                _ edit: (inout State, Audience) -> Edit) -> Announcement? {
        if loadingFile { ensureLoaded() }
        let announcement = values.storage.locked { s -> Announcement? in
            let audience = Audience(observing: values.observers.isActive, tracking: !s.tracked.isEmpty,
                                    userLayer: layer.isUser && values.observers.watchesUserLayer)
            var changed: [SettingsKey] = []
            var keyPaths = TrackedKeyPaths()
            var userChanges: [SettingsKey] = []
            switch edit(&s, audience) {
            case .unchanged:
                return nil
            case .unheard:
                break
            case .layer(let before, let userBefore):
                if let before {
                    changed = s.layers.effectiveChanges(from: before, in: layer)
                    keyPaths = s.trackedKeyPaths(for: .keys(changed), writing: SettingsKey(components: []))
                }
                if let userBefore { userChanges = s[.user].changedLeafPaths(from: userBefore) }
            case .keys(let keys, let userLeaves):
                if audience.observing { changed = keys }
                keyPaths = s.trackedKeyPaths(for: .keys(keys), writing: SettingsKey(components: []))
                userChanges = userLeaves
            case .key(let key, let effect, let userBefore):
                if audience.observing { changed = effect.keys(writing: key) }
                keyPaths = s.trackedKeyPaths(for: effect, writing: key)
                if audience.userLayer {
                    userChanges = Self.leafChanges(at: key, from: userBefore, to: s[.user].value(at: key.components))
                }
            }
            let save = s.unsaved.takeSaveRequest()
            // Bumped under the lock, with the change: a transaction that read the store at
            // this generation knows, under the same lock, that nothing changed since.
            values.generationCounter.add(1, ordering: .releasing)
            // No one to tell and no save to schedule (a write of a key no one observes, the
            // usual case): nothing to deliver, so no announcement is made.
            guard save || audience.observing || !keyPaths.isEmpty || !userChanges.isEmpty else { return nil }
            return Announcement(origin: origin, observing: audience.observing, changed: changed, keyPaths: keyPaths,
                                userChanges: userChanges, save: save)
        }
        return announcement
    }

    /// Changes one layer as a whole (or several keys of it) through ``commit(_:origin:loadingFile:_:)`` and
    /// delivers what changed.
    ///
    /// - Parameters:
    ///   - layer: the layer `body` changes (only it is compared to find what changed).
    ///   - origin: what the change is announced as.
    ///   - loadingFile: whether a file store's file is loaded first (see ``commit(_:origin:loadingFile:_:)``).
    ///   - body: changes the state; it runs under the store's lock.
    func replace(_ layer: SettingsLayer, origin: SettingsChange.Origin, loadingFile: Bool = true, _ body: (inout State) -> Void) {
        deliver(commit(layer, origin: origin, loadingFile: loadingFile) { s, audience in
            let before = audience.comparing ? s.layers : nil
            let userBefore = audience.userLayer ? s[.user] : nil
            body(&s)
            return .layer(before: before, userBefore: userBefore)
        })
    }

    /// Delivers a change, with no lock held: schedules the autosave it asks for, tells the
    /// Observation framework, then the observers, then the user-layer observers.
    @inline(__always)
    func deliver(_ announcement: consuming Announcement?) {
        guard let announcement = consume announcement else { return }
        if announcement.save { scheduleSave() }
        announce(announcement.keyPaths)
        if announcement.observing { publish(announcement.changed, origin: announcement.origin) }
        values.observers.publishUserLayer(announcement.userChanges, origin: announcement.origin)
    }

    /// The leaf key paths under `key` that differ between two values stored at `key`.
    static func leafChanges(at key: SettingsKey, from old: PlistValue?, to new: PlistValue?) -> [SettingsKey] {
        var before = PlistDictionary()
        var after = PlistDictionary()
        before.setValue(old, at: key.components[...])
        after.setValue(new, at: key.components[...])
        return after.changedLeafPaths(from: before)
    }

    /// Tells the Observation framework that tracked keys changed (never with a lock held: its
    /// `onChange` closures run from here).
    func announce(_ keyPaths: TrackedKeyPaths) {
        guard let first = keyPaths.first else { return }
        values.registrar.willSet(self, keyPath: first)
        values.registrar.didSet(self, keyPath: first)
        for keyPath in keyPaths.rest {
            values.registrar.willSet(self, keyPath: keyPath)
            values.registrar.didSet(self, keyPath: keyPath)
        }
    }

    /// Delivers a change to the observers (never called with a lock held).
    func publish(_ keys: [SettingsKey], origin: SettingsChange.Origin) {
        values.observers.publish(keys, origin: origin) { keys in
            values.storage.locked { s in keys.map { s.resolve($0) } }
        }
    }
}
