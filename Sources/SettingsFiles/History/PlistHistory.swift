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

/// The history of a property-list file: the last saved versions (generations), kept as
/// `generations/N.plist` (binary, owner-only, each written atomically) in the file's companion
/// directory (``PlistFile/companionDirectory(for:)``). Written only under the file's lock and
/// before the file itself is replaced, so a crash in between leaves the file as it was.
///
/// Bounded by ``Limits``: the oldest generations go first, the newest is always kept.
///
/// ```swift
/// try PlistHistory.keep(bytes, changed: [["volume"]], by: .thisProcess(.tool), for: target)
/// let last = try PlistHistory.list(for: target).last
/// ```
public enum PlistHistory {
    /// The directory of generations inside the companion directory.
    public static let directoryName = "generations"

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

    /// The generations directory beside `target`.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: `.NAME.meta/generations`.
    public static func directory(for target: String) -> String {
        PlistFile.companionDirectory(for: target) + "/" + directoryName
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

    /// What a writer that keeps generations of one file again and again knows about its
    /// generations directory between saves, so a save neither lists the directory nor looks at
    /// every generation's size while nobody else changed it (``keep(_:changed:by:for:limits:known:)``).
    ///
    /// Trusted only while the directory, the newest generation this writer kept and the absence
    /// of the next number are all as it left them: any other writer keeps the next number
    /// (all writers keep generations under the file's lock), so the cache never hides another
    /// writer's generation; anything else seen changed makes the save list the directory again.
    package struct Known: Sendable {
        /// The directory, and its identity after this writer last changed it.
        var directory: String?
        var directoryIdentity: PlistFile.Identity?
        /// The newest generation this writer kept, and its file's identity.
        var newest: (number: Int, identity: PlistFile.Identity)?
        /// The generations' numbers (ascending) and sizes, as last listed or kept.
        var numbers: [Int] = []
        var sizes: [Int: Int] = [:]
        /// Whether ``checkCurrent(for:)`` found it current, for the change under way.
        package var checkedCurrent = false

        package init() {}
    }

    /// ``keep(_:changed:by:for:limits:)`` for a writer that keeps `known` between saves: the
    /// directory is listed (once) only when `known` cannot be trusted, and pruning uses the sizes
    /// already known. The generations kept and removed are the same as without it.
    @discardableResult
    package static func keep(_ bytes: Data, changed: [[String]], by writer: SettingsProvenance, for target: String,
                             limits: Limits, provenance: PlistDictionary? = nil, known: inout Known) throws(PlistFile.Failure) -> Int? {
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
        let directory: String
        let directoryIdentity: PlistFile.Identity
        if known.checkedCurrent, let current = known.directory, let identity = known.directoryIdentity {
            // The recorder found it, under this lock a moment ago, to be the very directory
            // (device, inode, owner, mode, time) this writer made or checked and last changed.
            (directory, directoryIdentity) = (current, identity)
        } else {
            (directory, directoryIdentity) = try makeDirectory(for: target)
        }
        // Checked once per change: the recorder may have just done it under the same lock.
        let checked = known.checkedCurrent && directoryIdentity == known.directoryIdentity
        known.checkedCurrent = false
        if !checked, !known.isCurrent(directory, directoryIdentity) { known.list(directory) }
        let number = (known.numbers.last ?? 0) + 1
        guard number <= maximumNumber else {
            throw PlistFile.Failure("generation numbers are used up in \(directory) (remove the history to start again)", code: EOVERFLOW)
        }
        var entry: PlistDictionary = [
            "origin": .string(writer.origin.rawValue), "date": .date(writer.date),
            "changed": .array(changed.map { .string(keyPath($0)) }), "contents": .data(bytes),
            "number": .integer(PlistInteger(Int64(number))),
        ]
        if let process = writer.process { entry["process"] = .string(process) }
        if let pid = writer.pid { entry["pid"] = .integer(PlistInteger(Int64(pid))) }
        if let device = writer.device { entry["device"] = .string(device) }
        // The provenance log's entries this change set (``SettingsProvenanceLog/takeDelta()``): the
        // log is rewritten whole only now and then, and read back as that file plus these.
        if let provenance, !provenance.isEmpty { entry["provenance"] = .dictionary(provenance) }
        let encoded: [UInt8]
        do {
            encoded = try PlistValue.dictionary(entry).encodedBytes(as: .binary)
        } catch {
            throw PlistFile.Failure("cannot encode generation \(number): \(error)", code: EINVAL)
        }
        let path = directory + "/\(number).plist"
        // The oldest generation goes with this one (the count is at its limit): its file takes
        // the new one's name and bytes, so a save neither allocates an inode nor frees blocks
        // (on a file system mounted with `discard`, freeing blocks waits for the device).
        var recycled: PlistFile.Identity?
        if let oldest = known.numbers.first, known.numbers.count >= limits.count,
           let size = known.sizes[oldest], size <= encoded.count {
            switch recycle(directory + "/\(oldest).plist", as: path, with: encoded) {
            case .untouched: break
            case .recycled(let identity):
                recycled = identity
                fallthrough
            case .consumed:
                known.numbers.removeFirst()
                known.sizes[oldest] = nil
            }
        }
        let identity: PlistFile.Identity
        if let recycled {
            identity = recycled
        } else {
            do {
                // One small file operation: created under its final name (all writers keep
                // generations under the file's lock; a reader skips one not yet whole, and one a
                // killed writer left half-written never parses) and not flushed: history may be lost
                // to a power cut, the settings file may not.
                identity = try create(path, with: encoded)
            } catch {
                known = Known()  // whatever the failure left, list again next time
                throw error
            }
        }
        known.numbers.append(number)
        known.sizes[number] = encoded.count
        known.newest = (number, identity)
        known.prune(directory, limits: limits)
        known.directoryIdentity = try? PlistFile.identity(of: directory)
        return number
    }

    /// Removes generation `number` of `target`, kept for a save that then did not happen (the
    /// file could not be replaced), so history holds only saves that happened.
    ///
    /// - Parameters:
    ///   - number: the generation ``keep(_:changed:by:for:limits:known:)`` returned.
    ///   - target: the settings file (after the link rule).
    ///   - known: what the writer knows of the directory.
    package static func discard(_ number: Int, for target: String, known: inout Known) {
        let path = directory(for: target) + "/\(number).plist"
        guard unlink(path) == 0 || errno == ENOENT else {
            known = Known()
            return
        }
        known.numbers.removeAll { $0 == number }
        known.sizes[number] = nil
        if known.newest?.number == number { known = Known() }  // list again at the next save
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
        guard let directory = (try? existingDirectory(for: target)) ?? nil else { return }
        // The provenance the generations carry is folded into the log first.
        if foldingProvenance { SettingsProvenanceLog.fold(for: target) }
        let (numbers, temporary) = listing(directory)
        for name in temporary { unlink(directory + "/" + name) }
        for n in numbers { unlink(directory + "/\(n).plist") }
    }

    /// The generations kept beside `target`, oldest first (empty when there are none). A
    /// generation that cannot be read is skipped.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: the generations, each with its bytes.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory.
    public static func list(for target: String) throws(PlistFile.Failure) -> [PlistGeneration] {
        guard let directory = try existingDirectory(for: target) else { return [] }
        return numbers(in: directory).compactMap { read($0, in: directory) }
    }

    /// Generation `number` of `target`, or `nil` when it is not kept.
    ///
    /// - Parameters:
    ///   - number: the generation's number.
    ///   - target: the settings file (after the link rule).
    /// - Returns: the generation.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory.
    public static func generation(_ number: Int, for target: String) throws(PlistFile.Failure) -> PlistGeneration? {
        guard let directory = try existingDirectory(for: target) else { return nil }
        return read(number, in: directory)
    }

    /// The newest generation of `target`, or `nil` when none is kept.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: the generation.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory.
    public static func newest(for target: String) throws(PlistFile.Failure) -> PlistGeneration? {
        guard let directory = try existingDirectory(for: target), let last = numbers(in: directory).last else { return nil }
        return read(last, in: directory)
    }

    /// `a/b` with `/` and `\` escaped in components.
    static func keyPath(_ components: [String]) -> String {
        components.map { EscapedPath.escape($0, separator: "/") }.joined(separator: "/")
    }

    /// The generations kept beside `target`, oldest first, without their bytes (``PlistGeneration/bytes``
    /// is empty): what a listing shows, read without reading the kept files' contents (each
    /// generation file is mapped, and only its small values are decoded), so a history of large
    /// files lists as fast as a small one.
    ///
    /// - Parameter target: the settings file (after the link rule).
    /// - Returns: the generations, each without its bytes.
    /// - Throws: ``PlistFile/Failure`` for an unsafe companion directory.
    public static func summaries(for target: String) throws(PlistFile.Failure) -> [PlistGeneration] {
        guard let directory = try existingDirectory(for: target) else { return [] }
        return numbers(in: directory).compactMap { summary($0, in: directory) }
    }

    /// The largest generation file read: a settings file at its size limit, with the
    /// generation's own values around it.
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
    private static func generation(_ number: Int, from e: PlistDictionary, bytes: Data) -> PlistGeneration? {
        guard isGeneration(e, numbered: number), e["contents"]?.dataValue != nil,
              let origin = e["origin"]?.stringValue.flatMap(SettingsProvenance.Origin.init(rawValue:)),
              let date = e["date"]?.dateValue else { return nil }
        let writer = SettingsProvenance(origin: origin, process: e["process"]?.stringValue, pid: e["pid"]?.intValue,
                                     date: date, device: e["device"]?.stringValue)
        let changed = (e["changed"]?.arrayValue ?? []).compactMap { $0.stringValue.map { EscapedPath.split($0, separator: "/") } }
        return PlistGeneration(number: number, writer: writer, changed: changed, bytes: bytes)
    }

    /// The provenance entries of the generations after `number` (``keep(_:changed:by:for:limits:provenance:known:)``),
    /// oldest first, read without their files' contents.
    package static func provenanceDeltas(for target: String, after number: Int) -> [(number: Int, entries: PlistDictionary)] {
        guard let directory = (try? existingDirectory(for: target)) ?? nil else { return [] }
        var out: [(Int, PlistDictionary)] = []
        for n in numbers(in: directory) where n > number {
            guard case .dictionary(let e)? = mapped(n, in: directory), isGeneration(e, numbered: n) else { continue }
            if case .dictionary(let entries)? = e["provenance"] { out.append((n, entries)) }
        }
        return out
    }

    /// What became of the oldest generation's file offered to ``recycle(_:as:with:)``.
    private enum Recycling {
        /// It now is the new generation.
        case recycled(PlistFile.Identity)
        /// It is gone (renamed, then the new bytes could not be written): create the new one.
        case consumed
        /// It was not used (not this user's regular file with one link, or not openable).
        case untouched
    }

    /// Turns the file of the oldest generation, `old`, into the new one at `path` (which must
    /// not exist): same inode, overwritten in place, never shrunk (the caller offers only a file
    /// no larger than `bytes`, so a reader that mapped it never faults past its end).
    ///
    /// Never readable as a wrong generation: its first byte is cleared before it takes the new
    /// name (no format starts with a zero byte, so readers skip it), the new bytes are written
    /// after the first, and the first byte last. A writer killed at any step leaves a file that
    /// readers skip or the whole new generation; its `number` is checked by readers too
    /// (``isGeneration(_:numbered:)``), for a power cut that kept the rename and lost the data.
    private static func recycle(_ old: String, as path: String, with bytes: [UInt8]) -> Recycling {
        let fd = PlistFile.retrying { open(old, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) }
        guard fd >= 0 else { return .untouched }
        defer { close(fd) }
        var s = stat()
        guard !bytes.isEmpty, fstat(fd, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG, s.st_uid == geteuid(), s.st_nlink == 1,
              Int(s.st_size) <= bytes.count else { return .untouched }
        var zero: UInt8 = 0
        guard pwrite(fd, &zero, 1, 0) == 1 else { return .untouched }
        guard rename(old, path) == 0 else { return .untouched }
        let written = bytes.withUnsafeBytes { raw -> Bool in
            do throws(PlistFile.Failure) {
                try PlistFile.writeAll(fd, UnsafeRawBufferPointer(rebasing: raw[1...]), at: 1)
                try PlistFile.writeAll(fd, UnsafeRawBufferPointer(rebasing: raw[..<1]), at: 0)
                return true
            } catch {
                return false
            }
        }
        guard written, fstat(fd, &s) == 0 else {
            unlink(path)
            return .consumed
        }
        return .recycled(PlistFile.Identity(s))
    }

    /// Whether a generation file's values belong under `number`: a file written since generations
    /// carry their number must carry this one (one recycled under a new name whose new bytes a
    /// power cut lost still holds the old number). Files written before carry none.
    static func isGeneration(_ e: PlistDictionary, numbered number: Int) -> Bool {
        guard let recorded = e["number"] else { return true }
        return recorded.intValue == number
    }

    /// Creates `path` (which must not exist) holding `bytes`, owner-only, without a temporary
    /// file or a flush: one small file operation.
    private static func create(_ path: String, with bytes: [UInt8]) throws(PlistFile.Failure) -> PlistFile.Identity {
        let fd = PlistFile.retrying { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard fd >= 0 else { throw PlistFile.Failure("cannot create \(path)", code: errno) }
        do throws(PlistFile.Failure) {
            defer { close(fd) }
            var failure: PlistFile.Failure?
            bytes.withUnsafeBytes { raw in
                do throws(PlistFile.Failure) { try PlistFile.writeAll(fd, raw) } catch { failure = error }
            }
            if let failure { throw failure }
            var s = stat()
            guard fstat(fd, &s) == 0 else { throw PlistFile.Failure("cannot examine \(path)", code: errno) }
            return PlistFile.Identity(s)
        } catch {
            unlink(path)
            throw error
        }
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

    /// The generations directory beside `target`, created when missing, with its identity.
    private static func makeDirectory(for target: String) throws(PlistFile.Failure) -> (String, PlistFile.Identity) {
        let path = try PlistFile.makeCompanionDirectory(for: target) + "/" + directoryName
        var s = stat()
        if lstat(path, &s) != 0 {
            guard errno == ENOENT else { throw PlistFile.Failure("cannot look at \(path)") }
            if mkdir(path, 0o700) != 0, errno != EEXIST { throw PlistFile.Failure("cannot create \(path)") }
            guard lstat(path, &s) == 0 else { throw PlistFile.Failure("cannot look at \(path)") }
        }
        _ = try PlistFile.checkCompanion(path, s)  // the companion directory's rule: a real directory of this user's, closed to others
        return (path, PlistFile.Identity(s))
    }
}

extension PlistHistory.Known {
    /// Whether the numbers and sizes known still describe `directory`: it is the one this writer
    /// last changed, as it left it, its newest generation is still the one this writer kept, and
    /// no writer kept the number after it (the cheap test that does not depend on how finely the
    /// file system keeps modification times).
    func isCurrent(_ directory: String, _ identity: PlistFile.Identity) -> Bool {
        guard directory == self.directory, identity == directoryIdentity, let newest else { return false }
        return (try? PlistFile.identity(of: directory + "/\(newest.number).plist")) == newest.identity
            && (try? PlistFile.identity(of: directory + "/\(newest.number + 1).plist")) == .some(nil)
    }

    /// Lists `directory` (once): its generations' numbers and sizes, removing the temporary files
    /// writers killed while keeping a generation left (they exist only while a writer holds the
    /// file's lock, and the caller holds it).
    mutating func list(_ directory: String) {
        let (found, temporary) = PlistHistory.listing(directory)
        for name in temporary { unlink(directory + "/" + name) }
        self = PlistHistory.Known()
        self.directory = directory
        numbers = found
        for n in found {
            var s = stat()
            sizes[n] = lstat(directory + "/\(n).plist", &s) == 0 ? Int(s.st_size) : 0
        }
    }

    /// Removes the oldest generations beyond the count and the byte budget (never the newest).
    mutating func prune(_ directory: String, limits: PlistHistory.Limits) {
        var total = numbers.reduce(0) { $0 + (sizes[$1] ?? 0) }
        var removed = 0
        while numbers.count - removed > 1, numbers.count - removed > limits.count || total > limits.bytes {
            let n = numbers[removed]
            unlink(directory + "/\(n).plist")
            total -= sizes.removeValue(forKey: n) ?? 0
            removed += 1
        }
        numbers.removeFirst(removed)
    }
}

extension PlistHistory.Known {
    /// Whether the generations beside `target` are as this writer left them (no other writer
    /// kept or removed one since): then no generation carries provenance it has not seen.
    package mutating func checkCurrent(for target: String) -> Bool {
        let directory = PlistHistory.directory(for: target)
        guard let identity = try? PlistFile.identity(of: directory) else { return false }
        checkedCurrent = isCurrent(directory, identity)
        return checkedCurrent
    }

    /// Whether every generation numbered after `first` up to `last` is still kept (none was
    /// pruned or discarded): the provenance they carry can still be read back.
    package func holdsAll(after first: Int, through last: Int) -> Bool {
        guard last > first else { return true }
        guard let oldest = numbers.first else { return false }
        return oldest <= first + 1 && numbers.contains(last)
    }
}
