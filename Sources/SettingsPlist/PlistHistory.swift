#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One saved version of a property-list file, kept in its history (``PlistHistory``): when it
/// was saved, by whom, which key paths that save changed, and the file's bytes.
///
/// ```swift
/// for generation in try PlistHistory.list(for: target) {
///     print(generation.number, generation.writer.summary, generation.changed)
/// }
/// ```
public struct PlistGeneration: Hashable, Sendable {
    /// Its number: 1 for the first kept, one more for each one after.
    public var number: Int
    /// Who saved it and when (its digest is unused).
    public var writer: PlistProvenance
    /// The key paths that save changed.
    public var changed: [[String]]
    /// The file's bytes as saved.
    public var bytes: Data

    /// The file's contents as saved.
    ///
    /// - Returns: the dictionary.
    /// - Throws: ``PlistError`` when the kept bytes do not parse, ``PlistFile/Failure`` when the
    ///   root is not a dictionary.
    public func contents() throws -> PlistDictionary {
        guard case .dictionary(let dictionary) = try PlistValue(decoding: bytes) else {
            throw PlistFile.Failure("generation \(number) is not a dictionary", code: EINVAL)
        }
        return dictionary
    }
}

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
    /// - Returns: the new generation's number, or `nil` when `limits` keep none.
    /// - Throws: ``PlistFile/Failure`` when it cannot be written (the settings file must then not
    ///   be replaced either, or the history would miss a version).
    @discardableResult
    public static func keep(_ bytes: Data, changed: [[String]], by writer: PlistProvenance, for target: String,
                            limits: Limits = Limits()) throws(PlistFile.Failure) -> Int? {
        guard limits.count > 0 else { return nil }
        let directory = try makeDirectory(for: target)
        let existing = numbers(in: directory)
        let number = (existing.last ?? 0) + 1
        var entry: PlistDictionary = [
            "origin": .string(writer.origin.rawValue), "date": .date(writer.date),
            "changed": .array(changed.map { .string(keyPath($0)) }), "contents": .data(bytes),
        ]
        if let process = writer.process { entry["process"] = .string(process) }
        if let pid = writer.pid { entry["pid"] = .integer(PlistInteger(Int64(pid))) }
        if let device = writer.device { entry["device"] = .string(device) }
        let encoded: [UInt8]
        do {
            encoded = try PlistValue.dictionary(entry).encodedBytes(as: .binary)
        } catch {
            throw PlistFile.Failure("cannot encode generation \(number): \(error)", code: EINVAL)
        }
        let path = directory + "/\(number).plist"
        PlistFile.removeLeftoverTemporaryFiles(beside: path)  // from a writer killed while keeping this number
        try PlistFile.replace(path, with: encoded, permissions: 0o600, durable: false)  // history may be lost to a power cut; the settings file may not
        prune(directory, numbers: existing + [number], newest: encoded.count, limits: limits)
        return number
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

    private static func read(_ number: Int, in directory: String) -> PlistGeneration? {
        guard let file = try? PlistFile.read(directory + "/\(number).plist", followingLinks: false),
              case .dictionary(let e)? = try? PlistValue(decoding: file.bytes),
              let origin = e["origin"]?.stringValue.flatMap(PlistProvenance.Origin.init(rawValue:)),
              let date = e["date"]?.dateValue, let bytes = e["contents"]?.dataValue else { return nil }
        let writer = PlistProvenance(origin: origin, process: e["process"]?.stringValue, pid: e["pid"]?.intValue,
                                     date: date, device: e["device"]?.stringValue)
        let changed = (e["changed"]?.arrayValue ?? []).compactMap { $0.stringValue.map { EscapedPath.split($0, separator: "/") } }
        return PlistGeneration(number: number, writer: writer, changed: changed, bytes: bytes)
    }

    /// The generation numbers in `directory`, ascending.
    private static func numbers(in directory: String) -> [Int] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.compactMap { name -> Int? in
            guard name.hasSuffix(".plist"), let n = Int(name.dropLast(6)), n > 0 else { return nil }
            return n
        }.sorted()
    }

    /// Removes the oldest generations beyond the count and the byte budget (never the newest).
    private static func prune(_ directory: String, numbers: [Int], newest: Int, limits: Limits) {
        var sizes: [(Int, Int)] = numbers.dropLast().map { n in
            var s = stat()
            return (n, lstat(directory + "/\(n).plist", &s) == 0 ? Int(s.st_size) : 0)
        }
        var total = newest + sizes.reduce(0) { $0 + $1.1 }
        while !sizes.isEmpty, sizes.count + 1 > limits.count || total > limits.bytes {
            let (n, size) = sizes.removeFirst()
            unlink(directory + "/\(n).plist")
            total -= size
        }
    }

    private static func existingDirectory(for target: String) throws(PlistFile.Failure) -> String? {
        guard let companion = try PlistFile.existingCompanionDirectory(for: target) else { return nil }
        let path = companion + "/" + directoryName
        var s = stat()
        guard lstat(path, &s) == 0 else { return nil }
        _ = try PlistFile.checkCompanion(path, s)  // the companion directory's rule: a real directory of this user's, closed to others
        return path
    }

    private static func makeDirectory(for target: String) throws(PlistFile.Failure) -> String {
        let path = try PlistFile.makeCompanionDirectory(for: target) + "/" + directoryName
        var s = stat()
        if lstat(path, &s) != 0 {
            guard errno == ENOENT else { throw PlistFile.Failure("cannot look at \(path)") }
            if mkdir(path, 0o700) != 0, errno != EEXIST { throw PlistFile.Failure("cannot create \(path)") }
            guard lstat(path, &s) == 0 else { throw PlistFile.Failure("cannot look at \(path)") }
        }
        _ = try PlistFile.checkCompanion(path, s)  // the companion directory's rule: a real directory of this user's, closed to others
        return path
    }
}
