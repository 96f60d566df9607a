#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import SettingsFiles

/// Notices changes made to settings files by other processes or by hand.
///
/// On Linux one inotify instance serves every store: each store's directory is watched (so a
/// file replaced by `rename`, as every careful writer does, is seen as well as one rewritten in
/// place), and one background thread reads the events and asks the stores concerned to look at
/// their file. Where inotify is not available, or a store's directory does not exist yet, the
/// store is polled instead. A store's own saves are recognised by the file's identity and are
/// not reloaded.
///
/// A freed store gives its watch back: its entry goes, and the directory's watch is removed
/// (`inotify_rm_watch`) when no other store watches that directory, so the kernel's watch
/// count returns to where it was.
final class FileWatcher: Sendable {
    static let shared = FileWatcher()

    private final class Entry: Sendable {
        let name: String
        let path: String
        let id: ObjectIdentifier
        weak let store: SettingsStore?
        /// Whether it watches an administrator's directory (see ``watchSystem(_:applicationDirectory:)``).
        let isSystem: Bool
        init(name: String, path: String, store: SettingsStore, isSystem: Bool = false) {
            self.name = name
            self.path = path
            self.id = ObjectIdentifier(store)
            self.store = store
            self.isSystem = isSystem
        }
    }

    private struct State {
        /// The inotify descriptor, or -1 when inotify is not available.
        var descriptor: Int32 = -1
        var threadStarted = false
        /// Stores by watch descriptor (one per directory).
        var entries: [Int32: [Entry]] = [:]
        /// The watch descriptor of each watched store.
        var watches: [ObjectIdentifier: Int32] = [:]
        /// The watch descriptors of each store's administrator's directories.
        var systemWatches: [ObjectIdentifier: Set<Int32>] = [:]
    }

    private let state = Mutex(State())

    private init() {
        #if os(Linux)
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        state.locked { $0.descriptor = fd }
        #endif
    }

    /// Watches the file at `path` (the store's file, through symbolic links) with inotify, or
    /// polls it every `pollingInterval` when that is not possible; in that case the watch is
    /// tried again at each poll, so it comes back when the directory does.
    func watch(_ store: SettingsStore, path: String, pollingInterval: Duration) {
        if addWatch(store, path: path) { return }
        pollUntilWatched(store, path: path, every: pollingInterval)
    }

    /// Adds an inotify watch on `path`'s directory for `store`; `false` when inotify is not
    /// available or the directory does not exist.
    private func addWatch(_ store: SettingsStore, path: String) -> Bool {
        #if os(Linux)
        let parts = PathParts(path)
        let descriptor = state.locked { $0.descriptor }
        guard descriptor >= 0 else { return false }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
        let wd = inotify_add_watch(descriptor, parts.directory, mask)  // outside the lock
        guard wd >= 0 else { return false }
        store.backend?.watched.store(true, ordering: .releasing)
        return state.locked { s in
            let id = ObjectIdentifier(store)
            if let old = s.watches[id], old != wd { s.entries[old]?.removeAll { $0.id == id } }
            s.watches[id] = wd
            s.entries[wd, default: []].removeAll { $0.id == id }
            s.entries[wd, default: []].append(Entry(name: parts.name, path: path, store: store))
            if !s.threadStarted {
                s.threadStarted = startThread()
            }
            return s.threadStarted
        }
        #else
        return false
        #endif
    }

    /// Watches an administrator's application directory (`/etc/xdg/App`) for its
    /// `settings.plist` and `locked.plist`, and its parent (`/etc/xdg`) for the directory itself
    /// appearing, going or changing mode. Called again at each look at the files: a watch that
    /// exists is kept. Where inotify is not available, the files are looked at whenever the
    /// user's file is.
    func watchSystem(_ store: SettingsStore, applicationDirectory: String) {
        #if os(Linux)
        let parent = PathParts(applicationDirectory)
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
        let descriptor = state.locked { $0.descriptor }
        guard descriptor >= 0 else { return }
        var added: [(Int32, Entry)] = []
        let wdParent = inotify_add_watch(descriptor, parent.directory, mask)
        if wdParent >= 0 { added.append((wdParent, Entry(name: parent.name, path: applicationDirectory, store: store, isSystem: true))) }
        let wdDirectory = inotify_add_watch(descriptor, applicationDirectory, mask)
        if wdDirectory >= 0 {
            for name in [SettingsLocations.settingsFileName, SettingsLocations.lockedFileName] {
                added.append((wdDirectory, Entry(name: name, path: applicationDirectory + "/" + name, store: store, isSystem: true)))
            }
        }
        guard !added.isEmpty else { return }
        store.backend?.watched.store(true, ordering: .releasing)
        state.locked { s in
            let id = ObjectIdentifier(store)
            for (wd, entry) in added {
                guard !(s.entries[wd] ?? []).contains(where: { $0.id == id && $0.isSystem && $0.path == entry.path }) else { continue }
                s.entries[wd, default: []].append(entry)
                s.systemWatches[id, default: []].insert(wd)
            }
            if !s.threadStarted { s.threadStarted = startThread() }
        }
        #endif
    }

    /// Forgets a store being freed (called from its `deinit`, where weak references to it are
    /// already `nil`): removes its entry, and the directory's watch when no other store uses it.
    ///
    /// A store that watches the same directory at this moment (its `inotify_add_watch` returned
    /// the watch being removed) sees the watch end (`IN_IGNORED`), polls, and watches again.
    func unwatch(_ id: ObjectIdentifier) {
        #if os(Linux)
        let (descriptor, emptied) = state.locked { s -> (Int32, [Int32]) in
            var descriptors = s.systemWatches.removeValue(forKey: id) ?? []
            if let wd = s.watches.removeValue(forKey: id) { descriptors.insert(wd) }
            var emptied: [Int32] = []
            for wd in descriptors {
                s.entries[wd]?.removeAll { $0.id == id }
                guard s.entries[wd]?.isEmpty ?? true else { continue }
                s.entries[wd] = nil
                emptied.append(wd)
            }
            return (s.descriptor, emptied)
        }
        if descriptor >= 0 { for wd in emptied { inotify_rm_watch(descriptor, wd) } }
        #endif
    }

    /// Looks at `store`'s file every `interval` for as long as the store exists.
    func poll(_ store: SettingsStore, every interval: Duration) {
        Task.detached { [weak store] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let store else { return }
                store.reloadSoon()
            }
        }
    }

    /// Polls `store`'s file and tries to watch it again at each poll; stops polling once watched.
    private func pollUntilWatched(_ store: SettingsStore, path: String, every interval: Duration) {
        Task.detached { [weak store] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let store else { return }
                let watched = FileWatcher.shared.addWatch(store, path: path)
                store.reloadSoon()  // after the watch: nothing slips between the two
                if watched { return }
            }
        }
    }

    #if os(Linux)
    /// Starts the thread that reads inotify events (once per process).
    private func startThread() -> Bool {
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { _ in
            FileWatcher.shared.readEvents()
            return nil
        }, nil)
        guard result == 0 else { return false }
        pthread_detach(thread)
        return true
    }

    /// Reads events until the descriptor fails. The thread only reads: each batch of events is
    /// handled in a task, so all work on stores happens in the concurrency runtime (whose hand-offs
    /// ThreadSanitizer understands).
    private func readEvents() {
        let fd = state.locked { $0.descriptor }
        let capacity = 64 * 1024
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, capacity) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            let events = Array(buffer[..<n])
            Task.detached { FileWatcher.shared.handle(events) }
        }
    }

    /// Has the stores named by a batch of inotify events look at their files. A directory that
    /// went away (`IN_IGNORED`: deleted, renamed, its file system unmounted) loses its watch:
    /// its stores are polled until the directory is back, then watched again.
    private func handle(_ events: [UInt8]) {
        let headerSize = MemoryLayout<inotify_event>.size
        var touched: [SettingsStore] = []
        var orphaned: [(store: SettingsStore, path: String)] = []
        events.withUnsafeBytes { raw in
            var offset = 0
            while offset + headerSize <= raw.count {
                let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                let nameLength = Int(event.len)
                let nameBytes = raw[(offset + headerSize)..<min(offset + headerSize + nameLength, raw.count)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                let overflow = event.mask & UInt32(IN_Q_OVERFLOW) != 0
                let gone = event.mask & UInt32(IN_IGNORED) != 0
                state.locked { s in
                    if overflow {
                        for list in s.entries.values { touched += list.compactMap(\.store) }
                    } else if gone {
                        for entry in s.entries[event.wd] ?? [] {
                            if entry.isSystem {
                                // The administrator's directory went: looking again re-arms the watches.
                                s.systemWatches[entry.id]?.remove(event.wd)
                                if let store = entry.store { touched.append(store) }
                                continue
                            }
                            if s.watches[entry.id] == event.wd { s.watches[entry.id] = nil }
                            if let store = entry.store { orphaned.append((store, entry.path)) }
                        }
                        s.entries[event.wd] = nil
                    } else {
                        touched += (s.entries[event.wd] ?? []).filter { $0.name == name }.compactMap(\.store)
                    }
                }
                offset += headerSize + nameLength
            }
        }
        var seen = Set<ObjectIdentifier>()
        for store in touched where seen.insert(ObjectIdentifier(store)).inserted {
            store.reloadSoon()
        }
        for (store, path) in orphaned {
            store.reloadSoon()
            pollUntilWatched(store, path: path, every: .seconds(1))
        }
    }
    #endif
}
