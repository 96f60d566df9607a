#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist

extension PlistFile {
    /// Moves a malformed file to `NAME.corrupt-<UTC timestamp>` beside it, if it is still the
    /// file that was read (`identity`), and removes the oldest such files beyond `limit`.
    ///
    /// - Returns: where it went, or `nil` when the file changed since it was read (not moved).
    package static func moveAside(malformed target: String, _ identity: Identity, keeping limit: Int) throws(Failure) -> String? {
        guard try PlistFile.identity(of: target) == identity else { return nil }
        var destination = target + ".corrupt-" + timestamp()
        // Two in the same millisecond: never rename over one already moved aside.
        var n = 1
        while (try? PlistFile.identity(of: destination)) != nil {
            n += 1
            destination = target + ".corrupt-" + timestamp() + "-\(n)"
        }
        guard rename(target, destination) == 0 else { throw Failure("cannot move the file aside", code: errno) }
        syncDirectory(directory(of: target))
        pruneQuarantine(target, keeping: max(1, limit))
        return destination
    }

    /// Removes the oldest `NAME.corrupt-*` files beyond the limit.
    private static func pruneQuarantine(_ target: String, keeping limit: Int) {
        let directory = directory(of: target)
        let prefix = name(of: target) + ".corrupt-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let kept = names.filter { $0.hasPrefix(prefix) }.sorted()
        for name in kept.dropLast(limit) {
            unlink(directory + "/" + name)
        }
    }

    /// `20261123T101502.123Z`: sortable, unique to the millisecond, safe in file names.
    package static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = time_t(now.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = Int(now.tv_nsec) / 1_000_000
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec)).\(ms)Z"
    }
}
