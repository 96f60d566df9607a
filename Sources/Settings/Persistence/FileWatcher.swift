#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Notices changes made to settings files by other processes or by hand.
///
/// On Linux one inotify instance serves every store: each store's directory is watched (so a
/// file replaced by `rename`, as every careful writer does, is seen as well as one rewritten in
/// place), and one background thread reads the events and asks the stores concerned to look at
/// their file. Where inotify is not available, or a store's directory does not exist yet, the
/// store is polled instead. A store's own saves are recognised by the file's identity and are
/// not reloaded.
final class FileWatcher: Sendable {
    static let shared = FileWatcher()

    private final class Entry: Sendable {
        let name: String
        weak let store: SettingsStore?
        init(name: String, store: SettingsStore) {
            self.name = name
            self.store = store
        }
    }

    private struct State {
        /// The inotify descriptor, or -1 when inotify is not available.
        var descriptor: Int32 = -1
        var threadStarted = false
        /// Stores by watch descriptor (one per directory).
        var entries: [Int32: [Entry]] = [:]
    }

    private let state = Mutex(State())

    private init() {
        #if os(Linux)
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        state.locked { $0.descriptor = fd }
        #endif
    }

    /// Watches `store`'s file with inotify, or polls it every `pollingInterval` when that is
    /// not possible.
    func watch(_ store: SettingsStore, pollingInterval: Duration) {
        guard let path = store.file?.path else { return }
        #if os(Linux)
        let parts = PathParts(path)
        let added: Bool = state.locked { s in
            guard s.descriptor >= 0 else { return false }
            let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
            let wd = inotify_add_watch(s.descriptor, parts.directory, mask)
            guard wd >= 0 else { return false }
            s.entries[wd, default: []].removeAll { $0.store == nil }
            s.entries[wd, default: []].append(Entry(name: parts.name, store: store))
            if !s.threadStarted {
                s.threadStarted = startThread()
            }
            return s.threadStarted
        }
        if added { return }
        #endif
        poll(store, every: pollingInterval)
    }

    /// Looks at `store`'s file every `interval` for as long as the store exists.
    func poll(_ store: SettingsStore, every interval: Duration) {
        Task.detached { [weak store] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let store else { return }
                store.reloadIfChanged()
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

    /// Has the stores named by a batch of inotify events look at their files.
    private func handle(_ events: [UInt8]) {
        let headerSize = MemoryLayout<inotify_event>.size
        var touched: [SettingsStore] = []
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
                        s.entries[event.wd] = nil  // the directory went away
                    } else {
                        touched += (s.entries[event.wd] ?? []).filter { $0.name == name }.compactMap(\.store)
                    }
                }
                offset += headerSize + nameLength
            }
        }
        var seen = Set<ObjectIdentifier>()
        for store in touched where seen.insert(ObjectIdentifier(store)).inserted {
            store.reloadIfChanged()
        }
    }
    #endif
}
