#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file a settings file's history is kept in: `history.journal` in its companion
/// directory, one record per generation, appended.
///
/// A record is the magic `SGJ1`, the payload's length (4 bytes, little-endian), and the payload:
/// a binary property list holding the generation (when, by whom, which keys, the file's bytes,
/// its number, the provenance entries it carries), `oldest`, the oldest generation number
/// history keeps once this one is added, and `tag` and `after`, random names of the record and of
/// the one it was appended after. Readers see the generations from the last record's
/// `oldest` on; a writer appends while the records before that are few, and otherwise rewrites
/// the journal with the kept ones only (a temporary file renamed over it).
///
/// A save's record is appended *pending* (the magic `SGJP`) before the settings file is replaced,
/// and confirmed (its magic's last byte made `1`, in place) right after the replace: a writer
/// killed between the two leaves a record of a save that never happened, which readers do not
/// list and the next writer cuts off (``PlistHistory/keep(_:changed:by:for:limits:provenance:pending:known:writesLog:)``).
/// Only the last record may be pending.
///
/// Every record is written under the settings file's lock and never flushed (history may be
/// lost to a power cut, the settings file may not). Readers stop at the first record that is not
/// whole (a writer killed while appending, a power cut that kept the length and lost the data),
/// and the next writer cuts the journal there before it appends.
enum HistoryJournal {
    static let fileName = "history.journal"
    static let magic: [UInt8] = Array("SGJ1".utf8)
    /// The last byte of a pending record's magic (`SGJP`); a confirmed one's is `1`.
    static let pendingMark = UInt8(ascii: "P")
    static let headerSize = 8
    /// The largest journal read (256 MiB). A writer keeps it below: it is written again with the
    /// kept generations only before it would grow past this, or once those that went take as much
    /// room as those kept.
    static let maximumSize = 256 << 20
    /// The largest byte budget a writer honours (64 MiB): the kept generations, with the newest at
    /// the largest file size, then stay well below ``maximumSize``.
    static let largestBudget = 64 << 20

    /// One record as a writer or reader found it.
    struct Record: Sendable, Equatable {
        var number: Int
        /// Where the record starts, and its whole length (header and payload).
        var offset: Int
        var length: Int
        /// The oldest generation kept once this one was added (`nil`: a record migrated from the
        /// generations directory, which said nothing).
        var oldest: Int?
        /// Whether it carries provenance entries.
        var carriesProvenance: Bool
        /// Whether its writer wrote the provenance log's file whole after it (`logWritten`): a
        /// reader whose log's file seems unchanged then reads it again all the same, since the
        /// new file may have the old one's identity (an inode reused within one tick of the
        /// clock, at the same size).
        var writesLog = false
        /// The entries, once read or written (`nil`: not at hand; read from the journal when
        /// asked for). Kept with the record, so a journal read again as another file (whose
        /// numbers may have started again) brings its own.
        var entries: PlistDictionary? = nil
        /// A random name for this record (`tag`), and the name of the record it was appended
        /// after (`after`; `nil` for the first record of a journal, and in records an earlier
        /// version wrote). A writer takes the bytes past its known end as appended records only
        /// when the first of them names its own last record: numbers alone cannot tell an append
        /// from a journal cut and written again (a discarded generation's number kept by the
        /// next one, a rewrite into a reused inode).
        var tag: UInt64? = nil
        var after: UInt64? = nil
        /// Whether it is pending: the record of a save whose replace was not confirmed (yet).
        var pending = false
    }

    /// A new record's name (``Record/tag``): 63 random bits, the top one set, so every name
    /// takes the same 8 bytes in the record (its length does not vary with the draw).
    static func newTag() -> UInt64 {
        UInt64.random(in: .min ... .max) | 1 << 63
    }

    /// A record name read from a payload (`nil`: none, or not an integer).
    static func tag(_ value: PlistValue?) -> UInt64? {
        guard case .integer(let n)? = value, let signed = n.int64Value else { return nil }
        return UInt64(bitPattern: signed)
    }

    /// A record name as a payload holds it (a signed 64-bit integer, as binary property lists
    /// hold integers).
    static func tagValue(_ tag: UInt64) -> PlistValue {
        .integer(PlistInteger(Int64(bitPattern: tag)))
    }

    /// The journal's path beside `target`.
    static func path(for target: String) -> String {
        PlistFile.companionDirectory(for: target) + "/" + fileName
    }

    /// The records of `bytes` (a journal's, or the part of it from `base` on), in order: each
    /// whole, numbered above the one before and decoding as a generation, with the provenance
    /// entries it carries (decoded once, not again when asked for). Stops at the first one that
    /// is not.
    ///
    /// - Returns: the records and where the whole ones end (relative to `bytes`).
    static func scan(_ bytes: UnsafeRawBufferPointer, base: Int = 0, after previous: Int = 0)
        -> (records: [Record], end: Int) {
        var records: [Record] = []
        var at = 0
        var last = previous
        while at + headerSize <= bytes.count {
            guard bytes[at] == magic[0], bytes[at + 1] == magic[1], bytes[at + 2] == magic[2],
                  bytes[at + 3] == magic[3] || bytes[at + 3] == pendingMark else { break }
            let length = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            guard length > 0, length <= PlistHistory.maximumGenerationSize, at + headerSize + length <= bytes.count else { break }
            // Only the last record may be pending: one before others is not a record.
            let pending = bytes[at + 3] == pendingMark
            if pending && at + headerSize + length != bytes.count { break }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(at + headerSize) ..< (at + headerSize + length)])
            guard case .dictionary(let e)? = decodeWithoutContents(payload),
                  let number = e["number"]?.intValue, number > last, number <= PlistHistory.maximumNumber,
                  PlistHistory.generation(number, from: e, bytes: Data()) != nil else { break }
            // A writer names every pending record: one without a name is no record.
            if pending && tag(e["tag"]) == nil { break }
            let oldest = e["oldest"]?.intValue.flatMap { $0 >= 1 && $0 <= number ? $0 : nil }
            let entries = e["provenance"]?.dictionaryValue.flatMap { $0.isEmpty ? nil : $0 }
            records.append(Record(number: number, offset: base + at, length: headerSize + length, oldest: oldest,
                                  carriesProvenance: entries != nil, writesLog: e["logWritten"]?.boolValue == true,
                                  entries: entries, tag: tag(e["tag"]), after: tag(e["after"]), pending: pending))
            last = number
            at += headerSize + length
        }
        return (records, at)
    }

    /// The records a writer sees: from the last record's `oldest` on.
    static func kept(_ records: [Record]) -> ArraySlice<Record> {
        guard let oldest = records.last?.oldest else { return records[...] }
        return records.drop { $0.number < oldest }
    }

    /// The generations a listing shows: ``kept(_:)`` without a pending record (a save not made,
    /// or not made yet), from the last confirmed record's `oldest` on.
    static func listed(_ records: [Record]) -> ArraySlice<Record> {
        guard records.last?.pending == true else { return kept(records) }
        return kept(Array(records.dropLast()))
    }

    /// What became of a record seen pending.
    enum PendingState {
        /// Still there, still pending: its writer is between its append and its confirmation
        /// (or, to a writer holding the lock, was killed there).
        case pending
        /// Still there, confirmed.
        case confirmed
        /// Not there: another record (of another writer's, after this one was cut) or nothing
        /// is at its place, whatever the journal's identity says (a cut and an append of the
        /// same length within one tick of a coarse clock leave it as it was).
        case replaced
    }

    /// What became of `record`, seen pending, in the journal open as `fd`: read again whole, it
    /// is the same record when it has the same length, number and name (``Record/tag``).
    static func state(of record: Record, in fd: Int32) throws(PlistFile.Failure) -> PendingState {
        guard let name = record.tag else { return .replaced }
        var s = stat()
        guard fstat(fd, &s) == 0, Int(s.st_size) >= record.offset + record.length else { return .replaced }
        let bytes = try read(fd, from: record.offset, count: record.length)
        return bytes.withUnsafeBytes { raw in
            let found = scan(raw).records
            guard found.count == 1, found[0].length == record.length, found[0].tag == name, found[0].number == record.number else {
                return .replaced
            }
            return found[0].pending ? .pending : .confirmed
        }
    }

    /// Confirms the pending record at `offset` of the journal open as `fd` (for writing).
    static func confirm(_ fd: Int32, at offset: Int) throws(PlistFile.Failure) {
        try [magic[3]].withUnsafeBytes { raw in
            Result { () throws(PlistFile.Failure) in try PlistFile.writeAll(fd, raw, at: offset + 3) }
        }.get()
    }

    /// A payload's values but its contents (a generation's bytes are not copied).
    static func decodeWithoutContents(_ payload: UnsafeRawBufferPointer) -> PlistValue? {
        var options = PlistReadOptions()
        options.skippingDataLongerThan = 0
        return try? PlistValue.decode(payload.assumingMemoryBound(to: UInt8.self), options: options)
    }

    /// A record's bytes: the header (``pendingMark`` when `pending`) and `payload`.
    static func record(_ payload: [UInt8], pending: Bool = false) -> [UInt8] {
        let n = payload.count
        var out = magic
        if pending { out[3] = pendingMark }
        out.reserveCapacity(headerSize + n)
        out += [UInt8(truncatingIfNeeded: n), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 24)]
        out += payload
        return out
    }

    /// The journal beside `target` read whole for a reader (`nil` when there is none), bounded,
    /// never through a link.
    static func read(for target: String) throws(PlistFile.Failure) -> [UInt8]? {
        guard let directory = try PlistFile.existingCompanionDirectory(for: target) else { return nil }
        return try PlistFile.read(directory + "/" + fileName, limit: maximumSize, followingLinks: false)?.bytes
    }

    /// Opens (creating it, owner-only) the journal in `directory` for a writer: never through a
    /// link, never blocking, and only this user's own plain file with one name.
    static func openForWriting(in directory: String) throws(PlistFile.Failure) -> (fd: Int32, stat) {
        let path = directory + "/" + fileName
        let fd = PlistFile.retrying { open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o600) }
        guard fd >= 0 else {
            if errno == ELOOP { throw PlistFile.Failure("\(path) is a symbolic link; it is not followed", code: ELOOP) }
            throw PlistFile.Failure("cannot open \(path)")
        }
        var s = stat()
        guard fstat(fd, &s) == 0 else {
            let failure = PlistFile.Failure("cannot examine \(path)")
            close(fd)
            throw failure
        }
        guard (s.st_mode & S_IFMT) == S_IFREG, s.st_uid == geteuid(), s.st_nlink == 1 else {
            close(fd)
            throw PlistFile.Failure("\(path) is not this user's plain file with one name; history is not kept in it", code: EPERM)
        }
        return (fd, s)
    }

    /// Reads `count` bytes of `fd` from `offset`.
    static func read(_ fd: Int32, from offset: Int, count: Int) throws(PlistFile.Failure) -> [UInt8] {
        // Nothing to read: not through `unsafeUninitializedCapacity`, whose empty array is the
        // one every thread shares (ThreadSanitizer reports its count being set as a race).
        guard count > 0 else { return [] }
        var failure: PlistFile.Failure?
        // Not zeroed first: every byte is read into (or the bytes are not returned).
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count, let base = buffer.baseAddress {
                let n = PlistFile.retrying { pread(fd, base + done, count - done, off_t(offset + done)) }
                guard n > 0 else {
                    failure = PlistFile.Failure("cannot read the history journal", code: n == 0 ? EIO : errno)
                    break
                }
                done += n
            }
            initialized = failure == nil ? count : 0
        }
        if let failure { throw failure }
        return bytes
    }
}
