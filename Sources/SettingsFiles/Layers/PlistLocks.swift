public import SettingsPlist
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock rule: which keys a locks file forbids changing, and what a refused change says.
/// The library's store and the `settings` tool both refuse writes through it.
///
/// ```swift
/// let locks: PlistDictionary = ["Network": ["proxy": "http://proxy:3128"]]
/// PlistLocks.locks(["Network", "proxy"], in: locks)   // true
/// PlistLocks.locks(["Network"], in: locks)            // true: the namespace holds a lock
/// PlistLocks.locks(["Network", "timeout"], in: locks) // false
/// ```
public enum PlistLocks {
    /// Whether `key` is locked by `locks` (see ``PlistSystemLayers/lockingFile(of:)``).
    public static func locks(_ key: [String], in locks: PlistDictionary) -> Bool {
        guard !key.isEmpty, !locks.isEmpty else { return false }
        var current = locks
        for (index, component) in key.enumerated() {
            guard let value = current[component] else { return false }
            guard case .dictionary(let child) = value, !child.isEmpty else { return true }  // a locked leaf at or above the key
            if index == key.count - 1 { return true }  // a namespace holding locked keys
            current = child
        }
        return false
    }

    /// The refusal of a change that writes (or removes) the value at `key`, or `nil` when no
    /// lock forbids it.
    ///
    /// - Parameters:
    ///   - key: the key path's components.
    ///   - system: the domain's administrator's files.
    /// - Returns: the error text: "key 'K' is locked by FILE; nothing was changed".
    public static func refusal(changing key: [String], by system: PlistSystemLayers) -> Refusal? {
        system.lockingFile(of: key).map { Refusal(key: key, file: $0) }
    }

    /// The refusal of a change of a whole dictionary from `old` to `new` (a tool's edit, an
    /// import, a restore), or `nil` when every key it changes is unlocked.
    public static func refusal(changing old: PlistDictionary, to new: PlistDictionary, by system: PlistSystemLayers) -> Refusal? {
        guard !system.lockFiles.isEmpty else { return nil }
        for key in new.changedLeaves(from: old) {
            if let refusal = refusal(changing: key, by: system) { return refusal }
        }
        return nil
    }

    /// A refused change: the key and the locks file.
    public struct Refusal: Hashable, Sendable, CustomStringConvertible {
        /// The key path's components.
        public var key: [String]
        /// The locks file that forbids the change.
        public var file: String

        /// The key path as text (`/` between components, escaped inside them).
        public var keyPath: String { key.map { EscapedPath.escape($0, separator: "/") }.joined(separator: "/") }

        /// "key 'K' is locked by FILE; nothing was changed".
        public var description: String { "key '\(keyPath)' is locked by \(file); nothing was changed" }
    }
}
