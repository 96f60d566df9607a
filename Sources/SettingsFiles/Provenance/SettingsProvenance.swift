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

/// Who last set a key of a property-list file, and when: one entry of the file's provenance log
/// (``SettingsProvenanceLog``), kept in its companion directory so the file itself stays a plain plist.
///
/// ```swift
/// let line = SettingsProvenance.describe(key: ["Network", "timeout"], inFileAt: path)
/// // "set by MyApp pid 4121 at 2026-11-26 10:15:02 UTC"
/// ```
public struct SettingsProvenance: Hashable, Sendable {
    /// What kind of writer set the value.
    public enum Origin: String, Hashable, Sendable, CaseIterable {
        /// A program's own write through the Settings library.
        case write
        /// Found changed on disk by a writer that records no provenance: a person with an editor,
        /// another tool, or an older version of the library. The date is when it was seen.
        case changedOnDisk
        /// A migration rewrote it.
        case migration
        /// A sync integration applied a value written on another device.
        case sync
        /// The `settings` command-line tool.
        case tool
        /// A restore from the file's history.
        case restore
        /// Not known: the log is bounded (``SettingsProvenanceLog/maximumEntries`` entries, at most
        /// ``SettingsProvenanceLog/maximumSize`` bytes) and no longer holds this leaf, or it could
        /// not be read. Never reported as a change on disk, which would be a false statement.
        case unknown
    }

    /// What kind of writer set the value.
    public var origin: Origin
    /// The executable's name, where known.
    public var process: String?
    /// The process identifier, where known.
    public var pid: Int?
    /// When it was set (for ``Origin/changedOnDisk``: when the change was seen).
    public var date: Date
    /// The device the value came from (sync), where known.
    public var device: String?
    /// A digest of the value as it was set (``SettingsProvenance/digest(of:)``): a value whose digest
    /// no longer matches was changed since by a writer that records nothing.
    public var digest: UInt64

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - origin: what kind of writer set the value.
    ///   - process: the executable's name (`nil`: unknown).
    ///   - pid: the process identifier (`nil`: unknown).
    ///   - date: when it was set or seen.
    ///   - device: the device it came from, for sync.
    ///   - digest: ``digest(of:)`` of the value set.
    public init(origin: Origin, process: String? = nil, pid: Int? = nil, date: Date, device: String? = nil, digest: UInt64 = 0) {
        self.origin = origin
        self.process = process
        self.pid = pid
        self.date = date
        self.device = device
        self.digest = digest
    }

    /// An entry for the running process: its executable name and pid, now.
    ///
    /// - Parameters:
    ///   - origin: what kind of writer this process is.
    ///   - device: the device a synced value came from.
    /// - Returns: the entry, with digest 0 (``SettingsProvenanceLog/record(_:in:by:)`` fills it).
    public static func thisProcess(_ origin: Origin, device: String? = nil) -> SettingsProvenance {
        SettingsProvenance(origin: origin, process: executableName, pid: Int(getpid()), date: Date(), device: device)
    }

    /// The running executable's name (the last component of `argv[0]`). A program started as
    /// `/proc/self/exe` (a process starting itself again on Linux) is named after the file that
    /// link leads to, not `exe`.
    public static let executableName: String = {
        let first = CommandLine.arguments.first ?? "?"
        #if os(Linux)
        if first.hasPrefix("/proc/"), first.hasSuffix("/exe") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            if count > 0 {
                var target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if target.hasSuffix(" (deleted)") { target.removeLast(" (deleted)".count) }  // replaced since it started
                return PlistFile.name(of: target)
            }
        }
        #endif
        return PlistFile.name(of: first)
    }()

    /// One line for people: "set by MyApp pid 4121 at 2026-11-26 10:15:02 UTC", "changed on disk
    /// (edited by hand or by a program that records nothing), seen at …", "from device 3F2A via
    /// sync in MyApp pid 4121 at …".
    public var summary: String {
        let when = SettingsProvenance.format(date)
        let who = [process, pid.map { "pid \($0)" }].compactMap { $0 }.joined(separator: " ")
        let by = who.isEmpty ? "" : " " + who
        switch origin {
        case .write: return "set by\(by.isEmpty ? " a program" : by) at \(when)"
        case .changedOnDisk: return "changed on disk (edited by hand, or by a program that records no provenance), seen at \(when)"
        case .migration: return "rewritten by a migration in\(by.isEmpty ? " a program" : by) at \(when)"
        case .sync: return "from \(device.map { "device \($0)" } ?? "another device") via sync\(by.isEmpty ? "" : " in" + by) at \(when)"
        case .tool: return "set with the settings tool\(pid.map { " (pid \($0))" } ?? "") at \(when)"
        case .restore: return "restored from history by\(by.isEmpty ? " a program" : by) at \(when)"
        case .unknown: return "not known (the provenance log is bounded and no longer holds this key, or could not be read)"
        }
    }

    /// `2026-11-26 10:15:02 UTC`.
    ///
    /// A date read from a companion file is outside input: one that is not finite or lies
    /// outside years 1 to 9999 is "an unknown date", never a crash.
    static func format(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        guard t.isFinite, t >= -62_135_596_800, t < 253_402_300_800 else { return "an unknown date" }
        var seconds = time_t(t.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }

    /// A stable 64-bit digest (FNV-1a) of a value, the same in every process and version: what
    /// the log keeps instead of the value itself. Walks the value with a stack of its own (no
    /// recursion on its depth).
    ///
    /// - Parameter value: the value.
    /// - Returns: its digest.
    public static func digest(of value: PlistValue) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        func mix(_ n: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: n >> UInt64(shift))) } }
        func mix(_ text: String) {
            mix(UInt64(text.utf8.count))
            for byte in text.utf8 { mix(byte) }
        }
        var stack: [PlistValue] = [value]
        while let next = stack.popLast() {
            switch next {
            case .string(let s): mix(UInt8(1)); mix(s)
            case .integer(let i): mix(UInt8(2)); mix(i.description)
            case .real(let d): mix(UInt8(3)); mix(d.bitPattern)
            case .bool(let b): mix(UInt8(b ? 4 : 5))
            case .date(let d): mix(UInt8(6)); mix(d.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let d): mix(UInt8(7)); mix(UInt64(d.count)); for byte in d { mix(byte) }
            case .uid(let u): mix(UInt8(8)); mix(u)
            case .array(let items):
                mix(UInt8(9)); mix(UInt64(items.count))
                stack.append(contentsOf: items.reversed())
            case .dictionary(let dictionary):
                mix(UInt8(10)); mix(UInt64(dictionary.count))
                for (key, value) in dictionary.reversed() {
                    stack.append(value)
                    stack.append(.string(key))
                }
            }
        }
        return hash
    }
}
