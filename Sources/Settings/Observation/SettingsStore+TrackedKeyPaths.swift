import SettingsPlist

/// Observation key paths to notify: usually none or one, so the first is kept inline.
struct TrackedKeyPaths {
    var first: (any ObservedKeyPath)?
    var rest: [any ObservedKeyPath] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ keyPath: any ObservedKeyPath) {
        if first == nil { first = keyPath } else { rest.append(keyPath) }
    }
}

/// The keys read by settings (``SettingsStore/State/tracked``), with the key path the
/// Observation framework knows each by, and a summary that tells most writes of a key nobody
/// tracks so without hashing the key.
///
/// The summary has one bit set per tracked key, chosen by its ``SettingsKey/rootHash`` (the hash
/// of its first component). A write changes the effective value of the written key, the
/// namespaces above it and the keys below it, all of which share its first component: when
/// that component's bit is clear, no tracked key is among them. A set bit proves nothing (two
/// first components may share a bit); the look-up then decides. Keys are only ever added, so
/// the summary never needs clearing.
struct TrackedKeys {
    private(set) var keyPaths: [SettingsKey: any ObservedKeyPath] = [:]
    private var roots: UInt64 = 0

    var isEmpty: Bool { keyPaths.isEmpty }

    subscript(key: SettingsKey) -> (any ObservedKeyPath)? { keyPaths[key] }

    /// Tracks `key` under `keyPath`.
    mutating func insert(_ keyPath: any ObservedKeyPath, for key: SettingsKey) {
        keyPaths[key] = keyPath
        roots |= Self.bit(key)
    }

    /// Whether a tracked key may be `key`, above it or below it (`false`: certainly none is).
    @inline(__always) func mayRelate(to key: SettingsKey) -> Bool {
        roots & Self.bit(key) != 0
    }

    @inline(__always) private static func bit(_ key: SettingsKey) -> UInt64 {
        1 << UInt64(truncatingIfNeeded: key.rootHash & 63)
    }
}

extension SettingsStore.State {
    /// The Observation key paths of tracked keys whose value depends on what a write changed:
    /// the keys themselves, the namespaces above them and the keys below them.
    @inline(__always)  // a write that changed no effective value (or none tracked) finds none, without a call
    func trackedKeyPaths(for effect: WriteEffect, writing key: SettingsKey) -> TrackedKeyPaths {
        if case .none = effect { return TrackedKeyPaths() }
        if tracked.isEmpty { return TrackedKeyPaths() }
        return trackedKeyPaths(changedBy: effect, writing: key)
    }

    private func trackedKeyPaths(changedBy effect: WriteEffect, writing key: SettingsKey) -> TrackedKeyPaths {
        var found = TrackedKeyPaths()
        switch effect {
        case .none:
            break
        case .key:
            // A scalar replaced a scalar: only the key and the namespaces above it can change.
            guard tracked.mayRelate(to: key) else { break }
            if key.isTopLevel {
                if let keyPath = tracked[key] { found.append(keyPath) }
            } else {
                for n in 1...key.components.count {
                    if let keyPath = tracked[SettingsKey(components: Array(key.components[..<n]))] { found.append(keyPath) }
                }
            }
        case .keys(let changed):
            guard !changed.isEmpty else { break }
            for (trackedKey, keyPath) in tracked.keyPaths where changed.contains(where: { $0.isRelated(to: trackedKey) }) {
                found.append(keyPath)
            }
        }
        return found
    }
}

extension PlistValue {
    /// Whether the value is not a dictionary (so it never merges with other layers).
    var isScalar: Bool {
        if case .dictionary = self { return false }
        return true
    }
}
