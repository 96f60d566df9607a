#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The provenance log of a property-list file: for each leaf key path of the file (a value that is
/// not a dictionary), who last set it. Kept as `provenance.plist` (binary, owner-only) in the file's
/// companion directory (``PlistFile/companionDirectory(for:)``), written only under the file's lock.
///
/// Bounded: entries are kept only for leaves the file holds (``prune(to:)``), at most
/// ``maximumEntries`` of them (the oldest go first).
///
/// ```swift
/// var log = try SettingsProvenanceLog.load(for: target)
/// log.record([["volume"]], in: newContents, by: .thisProcess(.tool))
/// try log.save(for: target)
/// ```
public struct SettingsProvenanceLog: Hashable, Sendable {
    /// The log's file name in the companion directory.
    public static let fileName = "provenance.plist"
    /// The most entries kept.
    public static let maximumEntries = 10_000
    /// The largest log read, in bytes.
    public static let maximumSize = 4 << 20

    /// Who last set each leaf key path.
    public var entries: [[String]: SettingsProvenance] {
        get { storage }
        _modify {
            written = nil  // changed from outside: the next save encodes every entry
            delta = nil
            uncarried = true
            lineage = nil
            deepRoots = nil
            unmirrored = (nil, nil)
            yield &storage
        }
        set {
            written = nil
            delta = nil
            uncarried = true
            lineage = nil
            deepRoots = nil
            unmirrored = (nil, nil)
            storage = newValue
        }
    }

    /// The newest generation of the file's history whose provenance entries this log holds
    /// (``PlistHistory/provenanceDeltas(for:after:)``), and the one the log's own file holds.
    package var through = 0
    package private(set) var savedThrough = 0
    /// The lineage of the log's file this log was last read from or written as: a name its
    /// writers keep while each file they write is the one before it with the entries of the
    /// generations since applied, and renew at any other write (``save(for:keepingEncoding:keepingLineage:)``).
    /// A writer whose log has the file's lineage and whose generations since are still kept
    /// catches up on them instead of reading the file (``fileMarks(for:)``). `nil`: none known.
    package private(set) var lineage: String?
    /// Whether an entry changed since ``lineage`` was known that no kept generation carries: set
    /// by every change but a generation's replay (``apply(delta:)``), cleared when the writer
    /// kept the generations carrying them (``noteCarried()``) and when the file is read or written.
    package private(set) var uncarried = false
    /// The paths whose entries changed since the last ``takeDelta()`` (`nil`: changed from
    /// outside, as a whole).
    private var delta: Set<[String]>? = []
    /// The entries a replayed generation replaced, newest last: a generation kept for a save
    /// that a kill then stopped describes values the file never got, and the entry it replaced
    /// still describes the value left (``provenance(of:in:fileDate:)``, ``reconcile(with:)``).
    private var shadows: [[String]: [SettingsProvenance]] = [:]

    /// The entries.
    private var storage: [[String]: SettingsProvenance]
    /// The first components of the entries more than one component deep (a namespace's
    /// leaves), or `nil` until a targeted prune counts them: only below a changed key whose first
    /// component is among them can an entry hide, so a prune of other keys looks each of them up
    /// instead of walking every entry. Never shrinks while kept (a component left here only
    /// costs a walk).
    private var deepRoots: Set<String>?
    /// Whether every leaf of the file has its entry (or a missing one means a writer that
    /// records nothing changed it). `false` once a bound dropped entries, or the log on disk
    /// could not be read: a leaf without an entry is then of unknown provenance.
    public private(set) var isComplete = true {
        didSet { if oldValue != isComplete { lineage = nil } }  // no generation carries it: a new lineage
    }
    /// The log as last written or read by ``save(for:keepingEncoding:)`` or
    /// ``load(for:keepingEncoding:)``, and the paths whose entries changed since (`nil`: not kept).
    private var written: Written?
    /// The paths whose entries changed since each of the two copies a writer hands to readers in
    /// turn was last brought up to date (``mirror(into:slot:)``); `nil`: changed as a whole since.
    private var unmirrored: (Set<[String]>?, Set<[String]>?) = (nil, nil)

    /// The log's entries in the form they are written (the file's `keys` dictionary), and the
    /// paths whose entries ``record(_:in:by:)``, ``noteUnrecorded(_:in:seenAt:)`` or
    /// ``prune(to:)`` changed since: only those are encoded again at the next save.
    private struct Written: Sendable {
        var keys: PlistDictionary
        var touched: Set<[String]> = []
    }

    /// An empty log.
    public init() { storage = [:] }

    /// Logs are equal when their entries (and completeness) are.
    public static func == (a: SettingsProvenanceLog, b: SettingsProvenanceLog) -> Bool {
        a.storage == b.storage && a.isComplete == b.isComplete
    }

    /// Hashes the entries.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }

    /// Sets (or with `nil` removes) the entry at `path`, noting it for the next save.
    private mutating func set(_ entry: SettingsProvenance?, at path: [String]) {
        storage[path] = entry
        uncarried = true
        if entry != nil, path.count > 1 { deepRoots?.insert(path[0]) }
        written?.touched.insert(path)
        delta?.insert(path)
        unmirrored.0?.insert(path)
        unmirrored.1?.insert(path)
    }

    /// Brings `copy`, one of two copies of this log a writer hands to readers in turn (`slot` 0
    /// or 1), up to date with it: only the entries changed since that copy was last brought up
    /// to date are copied. A reader keeps the copy handed out last while the writer changes this
    /// log and brings the other copy up to date, so no log is copied whole at a change (as one
    /// shared with its reader would be) and none is freed whole at the next hand-out.
    ///
    /// Readers see what ``provenance(of:in:fileDate:)`` reads: the entries, the replaced ones
    /// (`shadows`) and whether the log is complete.
    package mutating func mirror(into copy: inout SettingsProvenanceLog, slot: Int) {
        if let paths = slot == 0 ? unmirrored.0 : unmirrored.1 {
            for path in paths { copy.storage[path] = storage[path] }
        } else {
            copy.storage = storage  // changed as a whole (read again): shared until either changes
        }
        copy.shadows = shadows
        copy.isComplete = isComplete
        copy.through = through
        copy.savedThrough = savedThrough
        copy.written = nil
        copy.delta = nil
        copy.deepRoots = nil
        copy.unmirrored = (nil, nil)
        if slot == 0 { unmirrored.0 = [] } else { unmirrored.1 = [] }
    }

    /// The entries changed since the last call, as a generation carries them (an entry as the
    /// log's file writes it, `false` for one removed); `nil` when the log was changed as a whole
    /// (the log's file must then be written).
    package mutating func takeDelta() -> PlistDictionary? {
        guard let paths = delta else {
            delta = []
            return nil
        }
        delta = []
        var out = PlistDictionary(minimumCapacity: paths.count)
        for path in paths.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            out.append(Self.key(path), storage[path].map(Self.value) ?? .bool(false))
        }
        return out
    }

    /// Notes that every entry changed since the log's file was read or written travels in a
    /// generation still kept (the writer kept the generations carrying ``takeDelta()``'s
    /// entries): the log is still its file's lineage.
    package mutating func noteCarried() {
        uncarried = false
    }

    /// Applies a generation's entries (``takeDelta()``); what does not read as an entry is skipped.
    ///
    /// - Returns: the key paths of the entries set or removed.
    @discardableResult
    package mutating func apply(delta entries: PlistDictionary) -> [[String]] {
        var applied: [[String]] = []
        let carried = !uncarried  // a generation's entries: the file's lineage holds them too
        defer { if carried { uncarried = false } }
        for (path, value) in entries {
            let components = EscapedPath.split(path, separator: "/")
            guard !components.isEmpty, components.count <= PlistNesting.maximumDepth else { continue }
            let replaced = storage[components]
            if value == .bool(false) {
                set(nil, at: components)
            } else if let entry = Self.entry(value) {
                set(entry, at: components)
            } else {
                continue
            }
            if let replaced { shadows[components, default: []].append(replaced) }
            applied.append(components)
        }
        return applied
    }

    /// Puts back, for each leaf of `contents` whose entry a replayed generation replaced with one
    /// that does not describe its value, the replaced entry that does (the generation's save
    /// never happened), then forgets the replaced entries: a writer calls it with the file as it
    /// is before recording a change of it.
    package mutating func reconcile(with contents: PlistDictionary) {
        guard !shadows.isEmpty else { return }
        for (path, replaced) in shadows {
            guard let value = contents.value(at: path) else { continue }
            let digest = SettingsProvenance.digest(of: value)
            if storage[path]?.digest != digest, let previous = replaced.last(where: { $0.digest == digest }) {
                set(previous, at: path)
            }
        }
        shadows = [:]
    }

    /// Folds the provenance the generations of `target` carry into the log's file, before the
    /// generations go (``PlistHistory/removeAll(for:)``): the file then describes everything,
    /// and the next generation numbers start again.
    package static func fold(for target: String) {
        guard (try? PlistFile.existingCompanionDirectory(for: target)) != nil,
              var log = try? load(for: target, keepingEncoding: false) else { return }
        log.through = 0
        _ = try? log.save(for: target, keepingEncoding: false)
    }

    /// The log's path beside `target`.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: `.NAME.meta/provenance.plist` beside it.
    public static func path(for target: String) -> String {
        PlistFile.companionDirectory(for: target) + "/" + fileName
    }

    /// The log kept beside `target`: empty when there is none. A log that cannot be parsed is
    /// treated as empty (it is rewritten at the next save; provenance is a record, never data).
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: the log.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory or an unreadable log.
    public static func load(for target: String) throws(PlistFile.Failure) -> SettingsProvenanceLog {
        try load(for: target, keepingEncoding: false)
    }

    /// ``load(for:)``; with `keepingEncoding`, the entries are also kept as they were read, so
    /// that ``save(for:keepingEncoding:)`` encodes only the entries changed since. Given the log
    /// this writer last saved or loaded (`previous`), only the entries whose encoded form changed
    /// since are decoded again (another writer's save changes a few).
    package static func load(for target: String, keepingEncoding: Bool,
                             updating previous: SettingsProvenanceLog? = nil,
                             deltas: ((Int) -> [(number: Int, entries: PlistDictionary)])? = nil) throws(PlistFile.Failure) -> SettingsProvenanceLog {
        // The generations' entries after the file's mark: read by the caller's own means when it
        // gives them (a writer reads only the history records it has not read yet).
        let deltas = deltas ?? { PlistHistory.provenanceDeltas(for: target, after: $0) }
        guard let directory = try PlistFile.existingCompanionDirectory(for: target) else { return SettingsProvenanceLog() }
        let contents: PlistFile.Contents?
        do {
            contents = try PlistFile.read(directory + "/" + fileName, limit: maximumSize, followingLinks: false)
        } catch where error.code == EFBIG {
            var log = unknown  // larger than any writer writes: nothing in it is believed
            log.replay(after: 0, deltas)
            return log
        }
        guard let contents else {
            var log = SettingsProvenanceLog()
            log.replay(after: 0, deltas)  // not written yet: the generations carry it all
            return log
        }
        guard let value = try? PlistValue(decoding: contents.bytes),
              case .dictionary(let root) = value, case .dictionary(let keys)? = root["keys"] else {
            var log = unknown
            log.replay(after: 0, deltas)
            return log
        }
        let complete = root["complete"]?.boolValue ?? true
        let through = root["through"]?.intValue ?? 0
        let lineage = root["lineage"]?.stringValue
        if keepingEncoding, let previous, let old = previous.written,
           var log = updated(previous.storage, writtenAs: old.keys, touched: old.touched, to: keys) {
            log.isComplete = complete
            log.replay(after: through, deltas)
            log.lineage = lineage
            log.uncarried = false
            return log
        }
        var log = SettingsProvenanceLog()
        log.isComplete = complete
        var canonical = keepingEncoding  // every key written as a save writes it
        for (path, value) in keys {
            guard let entry = entry(value) else { continue }
            let components = EscapedPath.split(path, separator: "/")
            if canonical, key(components) != path { canonical = false }
            log.storage[components] = entry
        }
        if canonical, log.storage.count == keys.count {  // every entry read back as it is written: reusable as it is
            log.written = Written(keys: keys)
        }
        log.replay(after: through, deltas)
        log.lineage = lineage
        log.uncarried = false
        return log
    }

    /// The lineage and the mark (`through`) of the log's file beside `target`, read without its
    /// entries (the look-up of two keys of a binary property list), and the identity of the
    /// file read: `nil` when there is no such file, or it has no lineage, or it is not a binary
    /// property list (an older writer's, or a hand-made one), which are read whole instead.
    package static func fileMarks(for target: String) -> (identity: PlistFile.Identity, lineage: String, through: Int)? {
        guard let contents = try? PlistFile.read(path(for: target), limit: maximumSize, followingLinks: false),
              contents.bytes.starts(with: "bplist00".utf8) else { return nil }
        var options = PlistReadOptions()
        options.onlyTopLevelKeys = ["lineage", "through"]
        guard let value = try? contents.bytes.withUnsafeBufferPointer({ buffer throws(PlistError) in try PlistValue.decode(buffer, options: options) }),
              case .dictionary(let root) = value, let lineage = root["lineage"]?.stringValue else { return nil }
        return (contents.identity, lineage, root["through"]?.intValue ?? 0)
    }

    /// Catches up on the entries of the generations after ``through`` (`deltas`) as another
    /// writer's file of this log's ``lineage``, written through generation `fileThrough`, holds
    /// them: the caller has checked that the file has this lineage and that the generations after
    /// ``through`` are all still kept. The log then reads as the file plus the generations after
    /// its mark, as ``load(for:keepingEncoding:updating:deltas:)`` would read it.
    ///
    /// - Returns: the key paths of the entries set or removed.
    package mutating func catchUp(asFileThrough fileThrough: Int, with deltas: [(number: Int, entries: PlistDictionary)]) -> [[String]] {
        let applied = catchUp(with: deltas)
        savedThrough = fileThrough
        return applied
    }

    /// Applies the entries of the generations kept after ``through``: at a load (after the log's
    /// file), and for a writer whose log's file is unchanged since it read or wrote it (after
    /// the newest generation it knows), where the log then reads as a whole
    /// ``load(for:keepingEncoding:updating:)`` would, at the cost of the new generations alone
    /// (with several processes saving one file, reading the whole log at each save was most of
    /// a save's work).
    ///
    /// Sound for the second because the file is unchanged: a writer that lets a generation carrying entries go
    /// before the file holds them writes the file whole first, so every generation after
    /// ``through`` that carries entries is still kept.
    ///
    /// - Returns: the key paths of the entries set or removed.
    @discardableResult
    package mutating func catchUp(for target: String) -> [[String]] {
        catchUp(with: PlistHistory.provenanceDeltas(for: target, after: through))
    }

    /// ``catchUp(for:)`` with the entries of the generations after ``through`` already read
    /// (``PlistHistory/Known/provenanceDeltas(for:after:)``: a writer reads only what is new).
    @discardableResult
    package mutating func catchUp(with deltas: [(number: Int, entries: PlistDictionary)]) -> [[String]] {
        var applied: [[String]] = []
        let own = delta
        for (n, entries) in deltas where n > through {
            applied += apply(delta: entries)
            through = n
        }
        // What the generations carry is in the journal already: this writer's next generation
        // carries only its own entries (carried again, each writer's entries would travel in
        // every other writer's generations, growing until the log is next written whole).
        delta = own
        return applied
    }

    /// Applies the entries of the generations kept after the log's file was written.
    private mutating func replay(after number: Int, _ deltas: (Int) -> [(number: Int, entries: PlistDictionary)]) {
        savedThrough = number
        through = number
        catchUp(with: deltas(number))
        delta = []
    }

    /// The log that `keys` (a file's) holds, from `storage` written as `old` and changed since
    /// at the paths `touched`: only the entries whose encoded form differs, and the touched
    /// ones, are decoded (another writer's save of the log changes a few, and this writer's own
    /// changes since are replayed from the generations after the file's). `nil` (read it all)
    /// when `keys` holds an entry that does not read back or a key not written as a save writes it.
    private static func updated(_ storage: [[String]: SettingsProvenance], writtenAs old: PlistDictionary,
                                touched: Set<[String]>, to keys: PlistDictionary) -> SettingsProvenanceLog? {
        var log = SettingsProvenanceLog()
        log.storage = storage
        // What this writer changed since describes its own state, not the file's: the file's
        // entries there (if any) are decoded below.
        var touchedKeys = Set<String>(minimumCapacity: touched.count)
        for path in touched {
            log.storage[path] = nil
            touchedKeys.insert(key(path))
        }
        var kept = 0  // keys of `old` still in `keys`
        for (path, value) in keys {
            let before = old[path]
            if before != nil { kept += 1 }
            if before == value, touchedKeys.isEmpty || !touchedKeys.contains(path) { continue }
            let components = EscapedPath.split(path, separator: "/")
            guard key(components) == path, let entry = entry(value) else { return nil }
            log.storage[components] = entry
        }
        if kept < old.count {
            for (path, _) in old where keys[path] == nil { log.storage[EscapedPath.split(path, separator: "/")] = nil }
        }
        guard log.storage.count == keys.count else { return nil }
        log.written = Written(keys: keys)
        return log
    }

    /// A log that could not be read: empty, and not complete (nothing is known).
    static var unknown: SettingsProvenanceLog {
        var log = SettingsProvenanceLog()
        log.isComplete = false
        return log
    }

    /// An entry as read from the file, or `nil` when it is not one.
    private static func entry(_ value: PlistValue) -> SettingsProvenance? {
        guard case .dictionary(let e) = value, let raw = e["origin"]?.stringValue,
              let origin = SettingsProvenance.Origin(rawValue: raw), let date = e["date"]?.dateValue else { return nil }
        let digest: UInt64 = switch e["digest"] { case .integer(let i)?: UInt64(i.description) ?? 0; default: 0 }
        return SettingsProvenance(origin: origin, process: e["process"]?.stringValue, pid: e["pid"]?.intValue, date: date,
                               device: e["device"]?.stringValue, digest: digest)
    }

    /// Writes the log beside `target` (atomically, owner-only), creating the companion directory.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Throws: ``PlistFile/Failure`` when it cannot be written.
    public func save(for target: String) throws(PlistFile.Failure) {
        var log = self
        try log.save(for: target, keepingEncoding: false)
    }

    /// ``save(for:)``; with `keepingEncoding`, the entries are kept as written, and when they
    /// were kept by the last save or load, only the entries changed since are encoded again.
    /// The file is the same as ``save(for:)`` writes but for the order of its keys.
    ///
    /// - Returns: the identity of the file written.
    ///
    /// With `keepingLineage`, a log whose every change since its file was read or written
    /// travels in a generation still kept (``noteCarried()``) keeps its ``lineage``: the file
    /// is then the one before with those generations' entries applied, and a writer of the same
    /// lineage can catch up on them instead of reading it. Otherwise the file starts a new lineage.
    @discardableResult
    package mutating func save(for target: String, keepingEncoding: Bool,
                               keepingLineage: Bool = false) throws(PlistFile.Failure) -> PlistFile.Identity {
        var mark = keepingLineage && !uncarried ? lineage ?? Self.newLineage() : Self.newLineage()
        var keys: PlistDictionary
        // Each removal shifts the entries after it: past a few, encoding all is cheaper.
        if var kept = written, keepingEncoding, kept.touched.count <= max(16, storage.count / 4),
           kept.touched.count(where: { storage[$0] == nil }) <= 16 {
            written = nil  // `kept.keys` is changed in place, not copied
            for path in kept.touched {
                if let entry = storage[path] {
                    kept.keys[Self.key(path)] = Self.value(entry)  // a new key goes last
                } else {
                    kept.keys.removeValue(forKey: Self.key(path))
                }
            }
            keys = kept.keys
        } else {
            keys = Self.encoded(storage)
        }
        var bytes = try Self.encode(keys, complete: isComplete, through: through, lineage: mark)
        if bytes.count > Self.maximumSize {
            // Never written larger than it is read: the oldest entries go (their leaves then
            // read as unknown) until it fits.
            while bytes.count > Self.maximumSize, !storage.isEmpty {
                let excess = max(1, storage.count - storage.count * Self.maximumSize / bytes.count + storage.count / 16)
                for (path, _) in storage.sorted(by: { $0.value.date < $1.value.date }).prefix(excess) { storage[path] = nil }
                unmirrored = (nil, nil)
                isComplete = false
                mark = Self.newLineage()  // entries no generation drops
                keys = Self.encoded(storage)
                bytes = try Self.encode(keys, complete: false, through: through, lineage: mark)
            }
        }
        written = keepingEncoding ? Written(keys: keys) : nil
        let identity = try Self.write(bytes, for: target)
        savedThrough = through
        delta = []
        lineage = mark
        uncarried = false
        return identity
    }

    /// A new lineage's name: 64 random bits, in hexadecimal.
    private static func newLineage() -> String {
        String(UInt64.random(in: .min ... .max), radix: 16)
    }

    /// Every entry as written, sorted by path.
    private static func encoded(_ entries: [[String]: SettingsProvenance]) -> PlistDictionary {
        var keys = PlistDictionary(minimumCapacity: entries.count)
        for (path, entry) in entries.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            keys.append(key(path), value(entry))
        }
        return keys
    }

    /// The file's bytes holding `keys`.
    private static func encode(_ keys: PlistDictionary, complete: Bool, through: Int, lineage: String) throws(PlistFile.Failure) -> [UInt8] {
        var root: PlistDictionary = ["version": 1, "keys": .dictionary(keys), "lineage": .string(lineage)]
        if !complete { root["complete"] = false }
        if through > 0 { root["through"] = .integer(PlistInteger(Int64(through))) }
        do {
            return try PlistValue.dictionary(root).encodedBytes(as: .binary)
        } catch {
            throw PlistFile.Failure("cannot encode the provenance log: \(error)", code: EINVAL)
        }
    }

    /// Writes the file's bytes.
    @discardableResult
    private static func write(_ bytes: [UInt8], for target: String) throws(PlistFile.Failure) -> PlistFile.Identity {
        let directory = try PlistFile.makeCompanionDirectory(for: target)
        return try PlistFile.replace(directory + "/" + fileName, with: bytes, permissions: 0o600, durable: false)  // digests make a lost log harmless
    }

    /// An entry's key in the file: its path with `/` and `\\` escaped in components.
    private static func key(_ path: [String]) -> String {
        PlistHistory.keyPath(path)
    }

    /// An entry as written.
    private static func value(_ entry: SettingsProvenance) -> PlistValue {
        var e: PlistDictionary = ["origin": .string(entry.origin.rawValue), "date": .date(entry.date),
                                  "digest": .integer(PlistInteger(entry.digest))]
        if let process = entry.process { e["process"] = .string(process) }
        if let pid = entry.pid { e["pid"] = .integer(PlistInteger(Int64(pid))) }
        if let device = entry.device { e["device"] = .string(device) }
        return .dictionary(e)
    }

    /// Records `writer` as the setter of every leaf at or below `keys` in `contents`; a key gone
    /// from `contents` loses its entry (entries below it go at the next ``prune(to:)``).
    ///
    /// - Parameters:
    ///   - keys: the key paths written (a dictionary's path records each of its leaves).
    ///   - contents: the file's contents after the write.
    ///   - writer: who wrote them (its digest is filled per leaf).
    public mutating func record(_ keys: [[String]], in contents: PlistDictionary, by writer: SettingsProvenance) {
        // Entries below a key now holding a leaf (or gone) no longer describe anything: ``prune(to:)``
        // drops them, once for all keys rather than a walk of every entry per key.
        for key in keys {
            guard let value = Self.value(at: key, in: contents) else {
                set(nil, at: key)
                continue
            }
            value.forEachLeaf(at: key) { path, leaf in
                var entry = writer
                entry.digest = SettingsProvenance.digest(of: leaf)
                set(entry, at: path)
            }
        }
    }

    /// Records `seen` (``SettingsProvenance/Origin/changedOnDisk``) for every leaf at `keys` (leaves
    /// that changed on disk) whose entry is missing or no longer matches its value.
    ///
    /// - Parameters:
    ///   - keys: leaf key paths found changed.
    ///   - contents: the file's contents now.
    ///   - date: when the change was seen.
    /// - Returns: whether an entry changed.
    @discardableResult
    public mutating func noteUnrecorded(_ keys: [[String]], in contents: PlistDictionary, seenAt date: Date) -> Bool {
        var changed = false
        for key in keys {
            guard let value = Self.value(at: key, in: contents) else {
                if storage[key] != nil {
                    set(nil, at: key)
                    changed = true
                }
                continue
            }
            value.forEachLeaf(at: key) { path, leaf in
                let digest = SettingsProvenance.digest(of: leaf)
                guard storage[path]?.digest != digest else { return }
                set(SettingsProvenance(origin: .changedOnDisk, date: date, digest: digest), at: path)
                changed = true
            }
        }
        return changed
    }

    /// The leaves of `contents` whose entry is missing or no longer matches their value: set by
    /// a writer that records nothing (or before there was a log).
    ///
    /// - Parameter contents: the file's contents.
    /// - Returns: their key paths.
    /// A leaf without an entry counts only while the log is complete (``isComplete``): otherwise
    /// its provenance is unknown, not a change on disk.
    public func unrecordedLeaves(in contents: PlistDictionary) -> [[String]] {
        var out: [[String]] = []
        PlistValue.dictionary(contents).forEachLeaf { path, leaf in
            guard let entry = entries[path] else {
                if isComplete { out.append(path) }
                return
            }
            if entry.digest != SettingsProvenance.digest(of: leaf) { out.append(path) }
        }
        return out
    }

    /// Drops entries for leaves `contents` no longer holds, then the oldest beyond ``maximumEntries``.
    ///
    /// - Parameter contents: the file's contents.
    public mutating func prune(to contents: PlistDictionary) {
        prune(to: contents, onlyAlong: nil)
    }

    /// ``prune(to:)`` for a log already pruned to the contents before a change of `changed`:
    /// only an entry on one of those paths (at it, above it or below it) can have lost its leaf,
    /// so only those are looked up (a save of one key of a large file looks up one entry, not
    /// every entry).
    ///
    /// - Parameters:
    ///   - contents: the file's contents after the change.
    ///   - changed: the key paths the change set or removed; `nil` looks at every entry.
    package mutating func prune(to contents: PlistDictionary, onlyAlong changed: [[String]]?) {
        let candidates = changed.flatMap { entriesAlong($0) }
            ?? storage.keys.filter { path in changed.map { Self.isAlong(path, $0) } ?? true }
        for path in candidates {
            switch Self.value(at: path, in: contents) {
            case nil, .dictionary?: set(nil, at: path)
            default: break
            }
        }
        if storage.count > Self.maximumEntries {
            let oldest = storage.sorted { $0.value.date < $1.value.date }.prefix(storage.count - Self.maximumEntries)
            for (path, _) in oldest { set(nil, at: path) }
            isComplete = false
        } else if !isComplete {
            // Complete again once every leaf has its entry (the file shrank, or was all rewritten).
            var everyLeafRecorded = true
            PlistValue.dictionary(contents).forEachLeaf { path, _ in
                if storage[path] == nil { everyLeafRecorded = false }
            }
            if everyLeafRecorded { isComplete = true }  // pruned above: no entry without its leaf
        }
    }

    /// The entries on the key paths `changed` (at one, or above one), found by look-ups; `nil`
    /// when an entry may lie below one of them (its first component has deeper entries), which
    /// only a walk of every entry finds.
    private mutating func entriesAlong(_ changed: [[String]]) -> [[String]]? {
        if deepRoots == nil {
            var roots = Set<String>()
            for path in storage.keys where path.count > 1 { roots.insert(path[0]) }
            deepRoots = roots
        }
        guard let roots = deepRoots else { return nil }
        var along: [[String]] = []
        for key in changed {
            guard let first = key.first, !roots.contains(first) else { return nil }
            for end in 1...key.count where storage[Array(key[..<end])] != nil { along.append(Array(key[..<end])) }
        }
        return along
    }

    /// Whether `path` is on one of `changed`: equal to one, or a prefix of one, or one's prefix.
    private static func isAlong(_ path: [String], _ changed: [[String]]) -> Bool {
        changed.contains { key in
            let shared = min(key.count, path.count)
            var i = 0
            while i < shared, key[i] == path[i] { i += 1 }
            return i == shared
        }
    }

    /// Who last set the value at `key` in `contents`: for a leaf, its entry; for a dictionary,
    /// the most recent entry of its leaves. A leaf with no entry, or whose entry no longer
    /// matches it, was changed by a writer that records nothing: it is reported as
    /// ``SettingsProvenance/Origin/changedOnDisk`` seen at `fileDate` (when the file last changed).
    ///
    /// - Parameters:
    ///   - key: the key path.
    ///   - contents: the file's contents.
    ///   - fileDate: the file's modification time.
    /// - Returns: the provenance, or `nil` when `contents` has no value at `key`.
    public func provenance(of key: [String], in contents: PlistDictionary, fileDate: Date) -> SettingsProvenance? {
        guard let value = Self.value(at: key, in: contents) else { return nil }
        var newest: SettingsProvenance?
        value.forEachLeaf(at: key) { path, leaf in
            let digest = SettingsProvenance.digest(of: leaf)
            let found = entries[path].flatMap { $0.digest == digest ? $0 : nil }
                ?? shadows[path]?.last(where: { $0.digest == digest })
                ?? SettingsProvenance(origin: entries[path] == nil && !isComplete ? .unknown : .changedOnDisk, date: fileDate, digest: digest)
            if newest == nil || found.date > newest!.date { newest = found }
        }
        return newest
    }

    /// The line `settings explain` shows for `key` of the file at `target`: its provenance
    /// (``SettingsProvenance/summary``), or `nil` when the file has no value there. The one function
    /// that renders provenance from the companion directory.
    ///
    /// ```swift
    /// SettingsProvenanceLog.describe(key: ["Network", "timeout"], inFileAt: target)
    /// // "set by MyApp pid 4121 at 2026-11-26 10:15:02 UTC"
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key path's components.
    ///   - target: the settings file (after the link rule).
    /// - Returns: the line, or `nil`.
    /// - Throws: ``PlistFile/Failure`` when the file or its companion directory cannot be read.
    public static func describe(key: [String], inFileAt target: String) throws(PlistFile.Failure) -> String? {
        guard let contents = try PlistFile.read(target, followingLinks: false),
              case .dictionary(let dictionary)? = try? PlistValue(decoding: contents.bytes) else { return nil }
        return try load(for: target).provenance(of: key, in: dictionary, fileDate: contents.identity.modificationDate)?.summary
    }

    /// The value at a key path (an empty path is nothing).
    static func value(at path: [String], in contents: PlistDictionary) -> PlistValue? {
        contents.value(at: path)
    }
}
