#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
package import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The history of a property-list file: the last saved versions (generations), kept in one
/// append-only journal, `history.journal` (owner-only, never flushed), in the file's companion
/// directory (``PlistFile/companionDirectory(for:)``). Written only under the file's lock and
/// before the file itself is replaced, so a crash in between leaves the file as it was.
///
/// Bounded by ``Limits``: the oldest generations go first, the newest is always kept. A save
/// appends one record to the journal; the journal is rewritten with the kept generations only
/// when those that went take as much room as those kept (or as many generations as the limit).
/// History kept by an earlier version of the library (`generations/N.plist`, one file each) is
/// read as it is, and moved into the journal by the next writer.
///
/// ```swift
/// try PlistHistory.keep(bytes, changed: [["volume"]], by: .thisProcess(.tool), for: target)
/// let last = try PlistHistory.list(for: target).last
/// ```
public enum PlistHistory {
    /// The directory of generations an earlier version of the library kept, one file each,
    /// inside the companion directory (read, and moved into the journal by the next writer).
    public static let directoryName = "generations"

    /// The journal's file name inside the companion directory.
    public static let journalName = HistoryJournal.fileName

    /// How much history is kept.
    public struct Limits: Hashable, Sendable {
        /// The most generations kept (0 keeps none).
        public var count: Int
        /// The most bytes all generations may take (the newest is kept even when larger).
        public var bytes: Int

        /// Creates limits.
        ///
        /// - Parameters:
        ///   - count: the most generations kept (default 20; 0 keeps none).
        ///   - bytes: the byte budget (default 16 MiB).
        public init(count: Int = 20, bytes: Int = 16 << 20) {
            self.count = max(0, count)
            self.bytes = max(0, bytes)
        }
    }

    /// The directory of generations an earlier version kept beside `target`.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: `.NAME.meta/generations`.
    public static func directory(for target: String) -> String {
        PlistFile.companionDirectory(for: target) + "/" + directoryName
    }

    /// The journal beside `target`.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: `.NAME.meta/history.journal`.
    public static func journal(for target: String) -> String {
        HistoryJournal.path(for: target)
    }

    /// Keeps `bytes` as the newest generation of `target` and removes the oldest beyond `limits`.
    ///
    /// - Parameters:
    ///   - bytes: the file's new bytes.
    ///   - changed: the key paths this save changed.
    ///   - writer: who saves it.
    ///   - target: the settings file (after the link rule).
    ///   - limits: how much history to keep.
    /// - Returns: the new generation's number, or `nil` when `limits` keep none (then every
    ///   generation already kept is removed).
    /// - Throws: ``PlistFile/Failure`` when it cannot be written (the settings file must then not
    ///   be replaced either, or the history would miss a version).
    @discardableResult
    public static func keep(_ bytes: Data, changed: [[String]], by writer: SettingsProvenance, for target: String,
                            limits: Limits = Limits()) throws(PlistFile.Failure) -> Int? {
        var known = Known()
        return try keep(bytes, changed: changed, by: writer, for: target, limits: limits, known: &known)
    }

    /// The most provenance entries a record carries and is still encoded without sharing
    /// (`PlistValue.unsharedBinaryBytes()`).
    static let unsharedEntries = 16

    /// What a writer that keeps generations of one file again and again knows about its journal
    /// between saves, so a save neither reads the journal nor decodes its records while nobody
    /// else changed it (``keep(_:changed:by:for:limits:provenance:known:)``).
    ///
    /// Trusted only while the journal is the very file (device, inode, size, modification time)
    /// this writer left: any other writer's record grows it (all writers keep generations under
    /// the file's lock), and then only the records after the known end are read.
    package struct Known: Sendable {
        /// The journal's identity after this writer last changed or read it.
        var identity: PlistFile.Identity?
        /// The journal held open since (``PlistFile/Held``): while it is, no other file can get
        /// its inode number, so a journal found with ``identity`` is this very file. Without it
        /// the identity is not trusted, and the journal is read whole.
        var held: PlistFile.Held?
        /// Its records, and where the whole ones end.
        var records: [HistoryJournal.Record] = []
        var end = 0
        /// Whether the generations directory of an earlier version was looked for (and moved).
        var movedEarlierGenerations = false
        /// The lowest number the next generation may take: above a pending record this writer
        /// cut off (a save that never happened), so a reader that saw it never takes the next
        /// generation for it.
        var numberFloor = 0

        package init() {}

        /// The generations readers see (from the last record's `oldest` on).
        var kept: ArraySlice<HistoryJournal.Record> { HistoryJournal.kept(records) }

        /// Whether ``identity`` names the file ``held`` holds open.
        var holdsJournal: Bool {
            guard let identity, let held else { return false }
            return held.identity.device == identity.device && held.identity.inode == identity.inode
        }

        /// Notes the journal as `journal` (open) now is, keeping it open.
        mutating func note(_ journal: PlistFile.Held) {
            var after = stat()
            if fstat(journal.fd, &after) == 0 {
                identity = PlistFile.Identity(after)
                held = journal.kept
            } else {
                identity = nil
                held = nil
            }
        }

        /// The most records whose provenance entries stay at hand (the newest; a writer's
        /// catch-up needs the few after the log's mark): a planted journal of many records
        /// costs their headers' memory, not their entries'.
        static let cachedEntries = 256

        /// Forgets the entries of all but the newest ``cachedEntries`` records.
        mutating func boundCachedEntries() {
            guard records.count > Self.cachedEntries else { return }
            for index in records.indices.dropLast(Self.cachedEntries) where records[index].entries != nil {
                records[index].entries = nil
            }
        }
    }

    /// ``keep(_:changed:by:for:limits:)`` for a writer that keeps `known` between saves: the
    /// journal is read only where another writer changed it. The generations kept are the same
    /// as without it.
    ///
    /// `writesLog`, given the new generation's number and the oldest one kept with it, says
    /// whether the writer writes the provenance log's file whole after it: the record then says
    /// so (`logWritten`), for readers who cannot tell the new file from the old one by its identity.
    ///
    /// A `pending` generation is kept for a save whose replace comes next: readers do not list
    /// it, and the next writer cuts it off, until ``confirm(for:known:)`` confirms it right after
    /// the replace. A writer killed between the two thus leaves no generation of a save that
    /// never happened.
    @discardableResult
    package static func keep(_ bytes: Data, changed: [[String]], by writer: SettingsProvenance, for target: String,
                             limits: Limits, provenance: PlistDictionary? = nil, pending: Bool = false, known: inout Known,
                             writesLog: ((_ number: Int, _ oldest: Int) -> Bool)? = nil) throws(PlistFile.Failure) -> Int? {
        guard limits.count > 0 else {
            // A limit of 0 keeps nothing, including what was kept while the limit was higher.
            removeAll(for: target)
            known = Known()
            return nil
        }
        guard bytes.count <= PlistFile.maximumSize else {
            // A file that large is never written (no reader would load it): neither is its generation.
            throw PlistFile.tooLarge(bytes.count)
        }
        let directory = try PlistFile.makeCompanionDirectory(for: target)
        if !known.movedEarlierGenerations {
            try moveEarlierGenerations(for: target, into: directory)
            known.movedEarlierGenerations = true
        }
        let (fd, s) = try HistoryJournal.openForWriting(in: directory)
        let journal = PlistFile.Held(fd: fd, identity: PlistFile.Identity(s))  // closed when neither this nor `known` holds it
        do throws(PlistFile.Failure) {
            try catchUp(journal, s, known: &known)
        } catch {
            known = Known()
            throw error
        }
        let number = max((known.records.last?.number ?? 0) + 1, known.numberFloor)
        guard number <= maximumNumber else {
            throw PlistFile.Failure("generation numbers are used up in \(directory) (remove the history to start again)", code: EOVERFLOW)
        }
        var entry: PlistDictionary = [
            "origin": .string(writer.origin.rawValue), "date": .date(writer.date),
            "changed": .array(changed.map { .string(keyPath($0)) }), "contents": .data(bytes),
            "number": .integer(PlistInteger(Int64(number))),
        ]
        // Its name, and its predecessor's: what tells an append from a journal written again.
        let tag = HistoryJournal.newTag()
        let after = known.records.last?.tag
        entry["tag"] = HistoryJournal.tagValue(tag)
        if let after { entry["after"] = HistoryJournal.tagValue(after) }
        if let process = writer.process { entry["process"] = .string(process) }
        if let pid = writer.pid { entry["pid"] = .integer(PlistInteger(Int64(pid))) }
        if let device = writer.device { entry["device"] = .string(device) }
        // The provenance log's entries this change set (``SettingsProvenanceLog/takeDelta()``): the
        // log is rewritten whole only now and then, and read back as that file plus these.
        let carried = provenance.flatMap { $0.isEmpty ? nil : $0 }
        if let carried { entry["provenance"] = .dictionary(carried) }
        // Which generations stay: the newest first, within the count and the byte budget (the
        // new one's size taken before its `oldest` is added, a few bytes short).
        let budget = min(limits.bytes, HistoryJournal.largestBudget)
        let estimate = HistoryJournal.headerSize + bytes.count + 256
        var oldest = number
        var total = estimate
        var count = 1
        for record in known.kept.reversed() {
            guard count < limits.count, total + record.length <= budget else { break }
            total += record.length
            count += 1
            oldest = record.number
        }
        entry["oldest"] = .integer(PlistInteger(Int64(oldest)))
        let marksLog = writesLog?(number, oldest) == true
        if marksLog { entry["logWritten"] = true }
        let payload: [UInt8]
        do {
            // A record of a few changes has few repeats, which cost more to find than sharing
            // them saves; the entries of many changes repeat their writer's, written once.
            let value = PlistValue.dictionary(entry)
            payload = (carried?.count ?? 0) <= Self.unsharedEntries
                ? try value.unsharedBinaryBytes(reservingCapacity: bytes.count + 512 + 160 * (carried?.count ?? 0))
                : try value.encodedBytes(as: .binary)
        } catch {
            throw PlistFile.Failure("cannot encode generation \(number): \(error)", code: EINVAL)
        }
        let record = HistoryJournal.record(payload, pending: pending)
        let new = HistoryJournal.Record(number: number, offset: known.end, length: record.count, oldest: oldest,
                                        carriesProvenance: carried != nil, writesLog: marksLog, entries: carried,
                                        tag: tag, after: after, pending: pending)
        // The records that went: appended after while few, else the journal is written again
        // with the kept ones only.
        let gone = known.records.prefix { $0.number < oldest }
        let goneBytes = gone.reduce(0) { $0 + $1.length }
        if gone.count >= max(limits.count, 8) || goneBytes > total || known.end + record.count > HistoryJournal.maximumSize {
            do throws(PlistFile.Failure) {
                try rewrite(fd, keeping: known.records.dropFirst(gone.count), adding: record, new, in: directory, known: &known)
            } catch {
                known = Known()
                throw error
            }
        } else {
            do throws(PlistFile.Failure) {
                try record.withUnsafeBytes { raw in
                    Result { () throws(PlistFile.Failure) in try PlistFile.writeAll(fd, raw, at: known.end) }
                }.get()
            } catch {
                _ = ftruncate(fd, off_t(known.end))  // a record partly written (a full disk) is cut off
                known = Known()
                throw error
            }
            known.records.append(new)
            known.end += record.count
            known.note(journal)
        }
        return number
    }

    /// Brings `known` up to the journal open as `fd` (examined as `s`), and cuts off a record a
    /// killed writer left unfinished, and a pending record whose writer did not confirm it (the
    /// caller holds the lock, so no writer is between its append and its confirmation).
    private static func catchUp(_ journal: PlistFile.Held, _ s: stat, known: inout Known) throws(PlistFile.Failure) {
        let torn = try known.read(journal.fd, s)
        if torn == true {
            // A record not whole (a writer killed while appending), or what is not a record at all.
            guard ftruncate(journal.fd, off_t(known.end)) == 0 else { throw PlistFile.Failure("cannot cut the history journal's unfinished record") }
        }
        if let last = known.records.last, last.pending {
            // Pending now (``Known/read(_:_:)`` looked), to the lock's holder: the record of a save
            // that never happened (its writer killed before the replace, or the replace failed).
            guard ftruncate(journal.fd, off_t(last.offset)) == 0 else { throw PlistFile.Failure("cannot cut the history journal's unconfirmed record") }
            known.records.removeLast()
            known.end = last.offset
            // The next number above it, as long as it is one a writer gave (at most a few above
            // the record before it): a planted one near the largest uses nothing up.
            let before = known.records.last?.number ?? 0
            if last.number - before <= 64 { known.numberFloor = max(known.numberFloor, last.number + 1) }
        } else if torn == nil {
            return  // unchanged
        }
        known.note(journal)
    }

    /// Confirms the pending generation ``keep(_:changed:by:for:limits:provenance:pending:known:writesLog:)``
    /// kept last, once its save's replace is made (the caller still holds the file's lock).
    ///
    /// - Parameters:
    ///   - target: the settings file (after the link rule).
    ///   - known: what the writer knows of the journal, its last record the pending one.
    /// - Throws: ``PlistFile/Failure`` when it cannot be written: the next writer then cuts the
    ///   generation off, as if the save had not happened.
    package static func confirm(for target: String, known: inout Known) throws(PlistFile.Failure) {
        guard let last = known.records.last, last.pending else { return }
        let journal: PlistFile.Held
        if let held = known.held, known.holdsJournal {
            journal = held
        } else {
            // Not held (past the budget of held files): the journal by its path, under the lock.
            let (fd, s) = try HistoryJournal.openForWriting(in: PlistFile.companionDirectory(for: target))
            journal = PlistFile.Held(fd: fd, identity: PlistFile.Identity(s))
        }
        do throws(PlistFile.Failure) {
            try HistoryJournal.confirm(journal.fd, at: last.offset)
        } catch {
            known = Known()  // read again at the next save, which cuts the record off
            throw error
        }
        known.records[known.records.count - 1].pending = false
        known.note(journal)
    }

    /// Writes the journal again holding `kept` (read from `fd`) and the new `record`: a temporary
    /// file renamed over it, not flushed.
    private static func rewrite(_ fd: Int32, keeping kept: ArraySlice<HistoryJournal.Record>, adding record: [UInt8],
                                _ new: HistoryJournal.Record, in directory: String, known: inout Known) throws(PlistFile.Failure) {
        var bytes: [UInt8] = []
        var records: [HistoryJournal.Record] = []
        if let first = kept.first, let last = kept.last {
            bytes = try HistoryJournal.read(fd, from: first.offset, count: last.offset + last.length - first.offset)
            records = kept.map { var r = $0; r.offset -= first.offset; return r }
        }
        var added = new
        added.offset = bytes.count
        bytes += record
        records.append(added)
        let written = try PlistFile.replaceHolding(directory + "/" + HistoryJournal.fileName, with: bytes, permissions: 0o600, durable: false)
        known.identity = written.identity
        known.held = written.kept
        known.records = records
        known.end = bytes.count
    }

    /// Moves the generations an earlier version of the library kept (`generations/N.plist`) into
    /// the journal, oldest first, after those it holds, and removes their directory (the caller
    /// holds the file's lock). One that cannot be read is left out.
    private static func moveEarlierGenerations(for target: String, into companion: String) throws(PlistFile.Failure) {
        guard let directory = try existingDirectory(for: target) else { return }
        let (fd, s) = try HistoryJournal.openForWriting(in: companion)
        let journal = PlistFile.Held(fd: fd, identity: PlistFile.Identity(s))
        var known = Known()
        try catchUp(journal, s, known: &known)
        let (numbers, temporary) = listing(directory)
        var appended: [UInt8] = []
        var last = known.records.last?.number ?? 0
        for n in numbers where n > last {
            guard let file = try? PlistFile.read(directory + "/\(n).plist", limit: maximumGenerationSize, followingLinks: false),
                  case .dictionary(var e)? = try? PlistValue(decoding: file.bytes), isGeneration(e, numbered: n),
                  generation(n, from: e, bytes: Data()) != nil else { continue }
            e["number"] = .integer(PlistInteger(Int64(n)))
            guard let payload = try? PlistValue.dictionary(e).encodedBytes(as: .binary),
                  known.end + appended.count + payload.count + HistoryJournal.headerSize <= HistoryJournal.maximumSize else { continue }
            appended += HistoryJournal.record(payload)
            last = n
        }
        if !appended.isEmpty {
            try appended.withUnsafeBytes { raw in
                Result { () throws(PlistFile.Failure) in try PlistFile.writeAll(fd, raw, at: known.end) }
            }.get()
        }
        for name in temporary { unlink(directory + "/" + name) }
        for n in numbers { unlink(directory + "/\(n).plist") }
        rmdir(directory)  // left when something else is in it
    }

    /// Removes generation `number` of `target`, kept for a save that then did not happen (the
    /// file could not be replaced), so history holds only saves that happened.
    ///
    /// - Parameters:
    ///   - number: the generation ``keep(_:changed:by:for:limits:provenance:known:)`` returned.
    ///   - target: the settings file (after the link rule).
    ///   - known: what the writer knows of the journal.
    package static func discard(_ number: Int, for target: String, known: inout Known) {
        defer { known = Known() }  // read again at the next save
        guard let directory = (try? PlistFile.existingCompanionDirectory(for: target)) ?? nil,
              let (fd, s) = try? HistoryJournal.openForWriting(in: directory) else { return }
        let journal = PlistFile.Held(fd: fd, identity: PlistFile.Identity(s))
        var current = known
        guard (try? catchUp(journal, s, known: &current)) != nil,
              let last = current.records.last, last.number == number else { return }
        _ = ftruncate(fd, off_t(last.offset))
    }

    /// Removes every generation kept beside `target` (and the temporary files of writers killed
    /// while keeping one): what a history limit of 0 asks for. Nothing is removed from a
    /// companion directory that is not safe to use (another user's, a link).
    ///
    /// - Parameter target: the settings file (after the link rule).
    public static func removeAll(for target: String) {
        removeAll(for: target, foldingProvenance: true)
    }

    /// ``removeAll(for:)``; without `foldingProvenance` when the provenance log goes too.
    package static func removeAll(for target: String, foldingProvenance: Bool) {
        guard let companion = (try? PlistFile.existingCompanionDirectory(for: target)) ?? nil else { return }
        // The provenance the generations carry is folded into the log first.
        if foldingProvenance { SettingsProvenanceLog.fold(for: target) }
        let journal = companion + "/" + HistoryJournal.fileName
        unlink(journal)
        PlistFile.removeLeftoverTemporaryFiles(beside: journal)
        guard let directory = (try? existingDirectory(for: target)) ?? nil else { return }
        let (numbers, temporary) = listing(directory)
        for name in temporary { unlink(directory + "/" + name) }
        for n in numbers { unlink(directory + "/\(n).plist") }
        rmdir(directory)
    }

    /// The generations kept beside `target`, oldest first (empty when there are none). A
    /// generation that cannot be read is skipped.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: the generations, each with its bytes.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory or journal.
    public static func list(for target: String) throws(PlistFile.Failure) -> [PlistGeneration] {
        if let journal = try HistoryJournal.read(for: target) { return generations(in: journal, withBytes: true) }
        guard let directory = try existingDirectory(for: target) else { return [] }
        return numbers(in: directory).compactMap { read($0, in: directory) }
    }

    /// Generation `number` of `target`, or `nil` when it is not kept.
    ///
    /// - Parameters:
    ///   - number: the generation's number.
    ///   - target: the settings file (after the link rule).
    /// - Returns: the generation.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory or journal.
    public static func generation(_ number: Int, for target: String) throws(PlistFile.Failure) -> PlistGeneration? {
        if let journal = try HistoryJournal.read(for: target) {
            return generations(in: journal, withBytes: true) { $0.filter { $0.number == number } }.first
        }
        guard let directory = try existingDirectory(for: target) else { return nil }
        return read(number, in: directory)
    }

    /// The newest generation of `target`, or `nil` when none is kept.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: the generation.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory or journal.
    public static func newest(for target: String) throws(PlistFile.Failure) -> PlistGeneration? {
        if let journal = try HistoryJournal.read(for: target) {
            return generations(in: journal, withBytes: true) { Array($0.suffix(1)) }.first
        }
        guard let directory = try existingDirectory(for: target), let last = numbers(in: directory).last else { return nil }
        return read(last, in: directory)
    }

    /// The generations a journal's bytes keep, oldest first; of them only those `selecting`
    /// picks are decoded.
    private static func generations(
        in journal: [UInt8], withBytes: Bool,
        selecting: (ArraySlice<HistoryJournal.Record>) -> [HistoryJournal.Record] = { Array($0) }
    ) -> [PlistGeneration] {
        journal.withUnsafeBytes { raw in
            selecting(HistoryJournal.listed(HistoryJournal.scan(raw).records)).compactMap { record -> PlistGeneration? in
                let payload = UnsafeRawBufferPointer(rebasing: raw[(record.offset + HistoryJournal.headerSize) ..< (record.offset + record.length)])
                let value = withBytes ? try? PlistValue.decode(payload.assumingMemoryBound(to: UInt8.self), options: PlistReadOptions())
                                      : HistoryJournal.decodeWithoutContents(payload)
                guard case .dictionary(let e)? = value else { return nil }
                return generation(record.number, from: e, bytes: withBytes ? (e["contents"]?.dataValue ?? Data()) : Data())
            }
        }
    }

    /// `a/b` with `/` and `\` escaped in components.
    static func keyPath(_ components: [String]) -> String {
        components.map { EscapedPath.escape($0, separator: "/") }.joined(separator: "/")
    }

    /// The generations kept beside `target`, oldest first, without their bytes (``PlistGeneration/bytes``
    /// is empty): what a listing shows, without decoding the kept files' contents (only each
    /// generation's small values are decoded; the journal itself is read whole, and an earlier
    /// version's generation files are mapped).
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: the generations, each without its bytes.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory or journal.
    public static func summaries(for target: String) throws(PlistFile.Failure) -> [PlistGeneration] {
        if let journal = try HistoryJournal.read(for: target) { return generations(in: journal, withBytes: false) }
        guard let directory = try existingDirectory(for: target) else { return [] }
        return numbers(in: directory).compactMap { summary($0, in: directory) }
    }

    /// The largest generation read (a journal's record, an earlier version's file): a settings
    /// file at its size limit, with the generation's own values around it.
    static let maximumGenerationSize = PlistFile.maximumSize + (1 << 20)

    /// Generation `number` without its bytes, from the mapped file (see ``summaries(for:)``).
    private static func summary(_ number: Int, in directory: String) -> PlistGeneration? {
        guard case .dictionary(let e)? = mapped(number, in: directory) else { return nil }
        return generation(number, from: e, bytes: Data())
    }

    /// Generation `number`'s values but its contents, decoded from the mapped file.
    private static func mapped(_ number: Int, in directory: String) -> PlistValue? {
        let fd = open(directory + "/\(number).plist", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG, s.st_size > 0,
              Int(s.st_size) <= maximumGenerationSize else { return nil }
        let size = Int(s.st_size)
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else { return nil }
        defer { munmap(mapped, size) }
        var options = PlistReadOptions()
        options.skippingDataLongerThan = 0
        let buffer = UnsafeBufferPointer(start: mapped.assumingMemoryBound(to: UInt8.self), count: size)
        return try? PlistValue.decode(buffer, options: options)
    }

    private static func read(_ number: Int, in directory: String) -> PlistGeneration? {
        guard let file = try? PlistFile.read(directory + "/\(number).plist", limit: maximumGenerationSize, followingLinks: false),
              case .dictionary(let e)? = try? PlistValue(decoding: file.bytes), let bytes = e["contents"]?.dataValue else { return nil }
        return generation(number, from: e, bytes: bytes)
    }

    /// A generation from its file's values, or `nil` when they are not a generation's.
    static func generation(_ number: Int, from e: PlistDictionary, bytes: Data) -> PlistGeneration? {
        guard isGeneration(e, numbered: number), e["contents"]?.dataValue != nil,
              let origin = e["origin"]?.stringValue.flatMap(SettingsProvenance.Origin.init(rawValue:)),
              let date = e["date"]?.dateValue else { return nil }
        let writer = SettingsProvenance(origin: origin, process: e["process"]?.stringValue, pid: e["pid"]?.intValue,
                                     date: date, device: e["device"]?.stringValue)
        let changed = (e["changed"]?.arrayValue ?? []).compactMap { $0.stringValue.map { EscapedPath.split($0, separator: "/") } }
        return PlistGeneration(number: number, writer: writer, changed: changed, bytes: bytes)
    }

    /// The provenance entries of the generations after `number` (``keep(_:changed:by:for:limits:provenance:known:)``),
    /// oldest first, read without their contents.
    package static func provenanceDeltas(for target: String, after number: Int) -> [(number: Int, entries: PlistDictionary)] {
        var known = Known()
        return known.provenanceDeltas(for: target, after: number)
    }

    /// ``provenanceDeltas(for:after:)`` from an earlier version's generations directory.
    fileprivate static func earlierProvenanceDeltas(for target: String, after number: Int) -> [(number: Int, entries: PlistDictionary)] {
        guard let directory = (try? existingDirectory(for: target)) ?? nil else { return [] }
        var out: [(Int, PlistDictionary)] = []
        for n in numbers(in: directory) where n > number {
            guard case .dictionary(let e)? = mapped(n, in: directory), isGeneration(e, numbered: n) else { continue }
            if case .dictionary(let entries)? = e["provenance"] { out.append((n, entries)) }
        }
        return out
    }

    /// Whether a generation file's values belong under `number`: a file written since generations
    /// carry their number must carry this one (one recycled under a new name whose new bytes a
    /// power cut lost still holds the old number). Files written before carry none.
    static func isGeneration(_ e: PlistDictionary, numbered number: Int) -> Bool {
        guard let recorded = e["number"] else { return true }
        return recorded.intValue == number
    }

    /// The generation numbers in `directory`, ascending.
    private static func numbers(in directory: String) -> [Int] {
        listing(directory).numbers
    }

    /// One pass over `directory`: the generation numbers (ascending) and the names of temporary
    /// files (``PlistFile/temporaryPrefix(for:)``) that writers killed while keeping a generation left.
    fileprivate static func listing(_ directory: String) -> (numbers: [Int], temporary: [String]) {
        var numbers: [Int] = []
        var temporary: [String] = []
        for name in PlistFile.entryNames(inDirectory: directory) ?? [] {
            if name.hasPrefix("."), name.contains(".plist.tmp-") {
                temporary.append(name)
            } else if let n = generationNumber(name) {
                numbers.append(n)
            }
        }
        return (numbers.sorted(), temporary)
    }

    /// The largest generation number a writer keeps or reads. Names are outside input: a
    /// planted `9223372036854775807.plist` must not make the next number overflow.
    static let maximumNumber = Int(Int32.max)

    /// The number a generation's file name gives: `N.plist` with `N` written the one way a
    /// writer writes it (no sign, no leading zero, at most ``maximumNumber``), so `03.plist` or
    /// `+4.plist` never stand for generations 3 and 4.
    static func generationNumber(_ name: String) -> Int? {
        guard name.hasSuffix(".plist") else { return nil }
        let stem = name.dropLast(6)
        guard let first = stem.first, first != "0", stem.allSatisfy({ $0 >= "0" && $0 <= "9" }),
              stem.count <= 10, let n = Int(stem), n <= maximumNumber else { return nil }
        return n
    }

    private static func existingDirectory(for target: String) throws(PlistFile.Failure) -> String? {
        guard let companion = try PlistFile.existingCompanionDirectory(for: target) else { return nil }
        let path = companion + "/" + directoryName
        var s = stat()
        guard lstat(path, &s) == 0 else { return nil }
        _ = try PlistFile.checkCompanion(path, s)  // the companion directory's rule: a real directory of this user's, closed to others
        return path
    }
}

extension PlistHistory.Known {
    /// The provenance entries of the generations after `number` (as
    /// ``PlistHistory/provenanceDeltas(for:after:)`` reads them), reading only the records this
    /// writer has not read yet: a writer catching up on others' saves reads their records, not
    /// the journal. Safe without the file's lock: a record being appended is read at the next
    /// call, and nothing is cut or written.
    package mutating func provenanceDeltas(for target: String, after number: Int) -> [(number: Int, entries: PlistDictionary)] {
        guard let directory = (try? PlistFile.existingCompanionDirectory(for: target)) ?? nil else { return [] }
        let path = directory + "/" + HistoryJournal.fileName
        let fd = PlistFile.retrying { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) }
        guard fd >= 0 else {
            self = PlistHistory.Known()
            return errno == ENOENT ? PlistHistory.earlierProvenanceDeltas(for: target, after: number) : []  // an earlier version's directory, if any
        }
        var s = stat()
        guard fstat(fd, &s) == 0 else {
            close(fd)
            self = PlistHistory.Known()
            return []
        }
        let journal = PlistFile.Held(fd: fd, identity: PlistFile.Identity(s))  // closed unless kept below
        guard (s.st_mode & S_IFMT) == S_IFREG, Int(s.st_size) <= HistoryJournal.maximumSize else {
            self = PlistHistory.Known()
            return []
        }
        do {
            // A record not whole yet (a writer appending now, or one killed while appending): the
            // next writer to hold the lock looks again, and cuts it off if it stays so.
            if let torn = try read(fd, s) {
                identity = torn ? nil : PlistFile.Identity(s)
                held = torn ? nil : journal.kept
            }
        } catch {
            return []
        }
        var out: [(Int, PlistDictionary)] = []
        for (index, record) in zip(kept.indices, kept) where record.number > number && record.carriesProvenance {
            if let entries = record.entries {
                out.append((record.number, entries))
                continue
            }
            // Its entries no longer at hand (beyond the newest records): its payload alone.
            guard let payload = try? HistoryJournal.read(fd, from: record.offset + HistoryJournal.headerSize,
                                                         count: record.length - HistoryJournal.headerSize),
                  case .dictionary(let e)? = payload.withUnsafeBytes({ HistoryJournal.decodeWithoutContents($0) }),
                  case .dictionary(let entries)? = e["provenance"] else { continue }
            if index >= records.count - Self.cachedEntries { records[index].entries = entries }  // not read again
            out.append((record.number, entries))
        }
        return out
    }

    /// Whether the journal beside `target` is as this writer left it (no other writer kept or
    /// removed a generation since): then no generation carries provenance it has not seen.
    package func checkCurrent(for target: String) -> Bool {
        guard let identity, holdsJournal else { return false }
        return (try? PlistFile.identity(of: HistoryJournal.path(for: target))) == .some(identity)
    }

    /// Reads what changed in the journal open as `fd` (examined as `s`) since this writer last
    /// read or wrote it: only the records appended after the known end when it grew, all of it
    /// when it is another file (another writer wrote it again), nothing when it is unchanged. One
    /// larger than any writer writes holds no records. ``identity`` is left to the caller. A last
    /// record left pending is pending in the journal now (looked at again, whatever the
    /// journal's identity says).
    ///
    /// - Returns: `nil` when the journal is unchanged; else whether it ends with bytes that are
    ///   not a whole record.
    mutating func read(_ fd: Int32, _ s: stat) throws(PlistFile.Failure) -> Bool? {
        let current = PlistFile.Identity(s)
        // Trusted only while held open: otherwise another journal may have its inode number.
        let held = holdsJournal
        let size = Int(s.st_size)
        let sameFile = held && identity.map { $0.device == current.device && $0.inode == current.inode } == true
        if sameFile, size == end, let last = records.last, last.pending {
            // A record seen pending is looked at again whatever the identity says: confirmed in
            // place since (the time changes, the length not), or cut and another appended in its
            // place at its length, which within one tick of a coarse clock leaves the identity as
            // it was. Still pending, in a journal that is otherwise unchanged: nothing to read.
            switch try HistoryJournal.state(of: last, in: fd) {
            case .confirmed:
                records[records.count - 1].pending = false
                return false
            case .pending where current == identity: return nil
            case .pending, .replaced: break  // read whole, below
            }
        } else if held, current == identity {
            return nil  // unchanged
        }
        if sameFile, size > end, end > 0, let appended = try appended(fd, size: size) {
            // Grown: others appended whole records after the records known (the first naming
            // the last known one, which was therefore confirmed if it was pending).
            if !records.isEmpty { records[records.count - 1].pending = false }
            records += appended.records
            end += appended.length
        } else if size > HistoryJournal.maximumSize {
            records = []
            end = 0
        } else {
            let all = try HistoryJournal.read(fd, from: 0, count: size)
            (records, end) = all.withUnsafeBytes { HistoryJournal.scan($0) }
        }
        boundCachedEntries()
        return end < size
    }

    /// The records after ``end`` of the journal open as `fd` (of `size` bytes, larger than
    /// ``end``), when they are whole records numbered on from the last one known, the first
    /// naming that one as its predecessor (``HistoryJournal/Record/after``), up to the
    /// journal's end: what appends leave. `nil` for anything else, which the caller reads whole:
    /// a record being appended (without the lock) or left unfinished by a killed writer, or
    /// another journal with this one's inode (written again by another writer, with an inode
    /// freed by an earlier rewrite; or cut by a discarded generation, whose number the next one
    /// took, and appended to). Cutting the journal at ``end`` on
    /// such bytes would throw away the other writers' generations, so only a whole read decides
    /// where its records end.
    private func appended(_ fd: Int32, size: Int) throws(PlistFile.Failure) -> (records: [HistoryJournal.Record], length: Int)? {
        let tail = try HistoryJournal.read(fd, from: end, count: size - end)
        let last = records.last
        let (found, length) = tail.withUnsafeBytes { HistoryJournal.scan($0, base: end, after: last?.number ?? 0) }
        guard let first = found.first, first.number == (last?.number ?? 0) + 1, end + length == size else { return nil }
        // Appended after this writer's last record, by name (an earlier version's records have
        // none: then the numbers alone decide).
        if let known = last?.tag, first.after != known { return nil }
        return (found, length)
    }

    /// Whether a generation numbered after `number` says its writer wrote the provenance log's
    /// file whole after it (``HistoryJournal/Record/writesLog``).
    package func logWritten(after number: Int) -> Bool {
        records.contains { $0.number > number && $0.writesLog }
    }

    /// The newest generation kept, if any.
    package var newest: Int? { kept.last?.number }

    /// Whether every generation numbered after `first` up to `last` is still kept (none was
    /// pruned or discarded): the provenance they carry can still be read back.
    package func holdsAll(after first: Int, through last: Int) -> Bool {
        guard last > first else { return true }
        let kept = self.kept
        guard let oldest = kept.first?.number else { return false }
        return oldest <= first + 1 && kept.contains { $0.number == last }
    }
}
