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

extension SettingsStore.State {
    /// The Observation key paths of tracked keys whose value depends on what a write changed:
    /// the keys themselves, the namespaces above them and the keys below them.
    func trackedKeyPaths(for effect: WriteEffect, writing key: SettingsKey) -> TrackedKeyPaths {
        var found = TrackedKeyPaths()
        guard !tracked.isEmpty else { return found }
        switch effect {
        case .none:
            break
        case .key:
            // A scalar replaced a scalar: only the key and the namespaces above it can change.
            if key.isTopLevel {
                if let keyPath = tracked[key] { found.append(keyPath) }
            } else {
                for n in 1...key.components.count {
                    if let keyPath = tracked[SettingsKey(components: Array(key.components[..<n]))] { found.append(keyPath) }
                }
            }
        case .keys(let changed):
            guard !changed.isEmpty else { break }
            for (trackedKey, keyPath) in tracked where changed.contains(where: { $0.isRelated(to: trackedKey) }) {
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
