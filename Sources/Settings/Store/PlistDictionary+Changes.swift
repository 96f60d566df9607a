import SettingsPlist

extension PlistDictionary {
    /// Appends the key paths (below `prefix`) where this dictionary and `other` differ: where one
    /// has a key the other lacks, or their values differ. Where both hold a dictionary, the
    /// comparison goes inside it, so only the changed leaves are listed.
    func collectDifferingPaths(from other: PlistDictionary, prefix: [String], into paths: inout [SettingsKey]) {
        for (key, value) in self {
            let theirs = other[key]
            if theirs == value { continue }
            if case .dictionary(let mine)? = Optional(value), case .dictionary(let below)? = theirs {
                mine.collectDifferingPaths(from: below, prefix: prefix + [key], into: &paths)
            } else {
                paths.append(SettingsKey(components: prefix + [key]))
            }
        }
        for (key, _) in other where self[key] == nil {
            paths.append(SettingsKey(components: prefix + [key]))
        }
    }
}

extension PlistDictionary {
    /// The key paths of the leaves (non-dictionary values) that differ between `old` and this
    /// dictionary: added, removed or changed. A dictionary replaced by a leaf, or a leaf by a
    /// dictionary, counts every leaf on both sides. Empty dictionaries have no leaves.
    func changedLeafPaths(from old: PlistDictionary) -> [SettingsKey] {
        var paths: [SettingsKey] = []
        Self.diff(old, self, prefix: [], into: &paths)
        return paths
    }

    private static func diff(_ old: PlistDictionary, _ new: PlistDictionary, prefix: [String], into paths: inout [SettingsKey]) {
        for (key, value) in new {
            let path = prefix + [key]
            guard let before = old[key] else {
                leaves(of: value, prefix: path, into: &paths)
                continue
            }
            if case .dictionary(let a) = before, case .dictionary(let b) = value {
                diff(a, b, prefix: path, into: &paths)
            } else if before != value {
                leaves(of: before, prefix: path, into: &paths)
                if case .dictionary = before { leaves(of: value, prefix: path, into: &paths) }
            }
        }
        for (key, value) in old where new[key] == nil {
            leaves(of: value, prefix: prefix + [key], into: &paths)
        }
    }

    private static func leaves(of value: PlistValue, prefix: [String], into paths: inout [SettingsKey]) {
        guard case .dictionary(let dictionary) = value else {
            paths.append(SettingsKey(components: prefix))
            return
        }
        for (key, child) in dictionary { leaves(of: child, prefix: prefix + [key], into: &paths) }
    }
}
