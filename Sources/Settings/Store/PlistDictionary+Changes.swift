import SettingsPlist

extension PlistDictionary {
    /// Appends the key paths (below `prefix`) where this dictionary and `other` differ: where one
    /// has a key the other lacks, or their values differ. Where both hold a dictionary, the
    /// comparison goes inside it, so only the changed leaves are listed. A loop with a stack of
    /// its own: no recursion on the dictionaries' depth.
    func collectDifferingPaths(from other: PlistDictionary, prefix: [String], into paths: inout [SettingsKey]) {
        var stack = [Pair(old: other, new: self, prefix: prefix)]
        while let top = stack.indices.last {
            let index = stack[top].next
            guard index < stack[top].new.count else {
                let done = stack.removeLast()
                for (key, _) in done.old where done.new[key] == nil {
                    paths.append(SettingsKey(components: done.prefix + [key]))
                }
                continue
            }
            stack[top].next += 1
            let (key, value) = stack[top].new[index]
            let theirs = stack[top].old[key]
            if theirs == value { continue }
            if case .dictionary(let mine) = value, case .dictionary(let below)? = theirs {
                stack.append(Pair(old: below, new: mine, prefix: stack[top].prefix + [key]))
            } else {
                paths.append(SettingsKey(components: stack[top].prefix + [key]))
            }
        }
    }
}

extension PlistDictionary {
    /// The key paths of the leaves (non-dictionary values) that differ between `old` and this
    /// dictionary: added, removed or changed. A dictionary replaced by a leaf, or a leaf by a
    /// dictionary, counts every leaf on both sides. Empty dictionaries have no leaves. A loop with
    /// a stack of its own: no recursion on the dictionaries' depth.
    func changedLeafPaths(from old: PlistDictionary) -> [SettingsKey] {
        var paths: [SettingsKey] = []
        var stack = [Pair(old: old, new: self, prefix: [])]
        while let top = stack.indices.last {
            let index = stack[top].next
            guard index < stack[top].new.count else {
                let done = stack.removeLast()
                for (key, value) in done.old where done.new[key] == nil {
                    Self.leaves(of: value, prefix: done.prefix + [key], into: &paths)
                }
                continue
            }
            stack[top].next += 1
            let (key, value) = stack[top].new[index]
            let path = stack[top].prefix + [key]
            guard let before = stack[top].old[key] else {
                Self.leaves(of: value, prefix: path, into: &paths)
                continue
            }
            if case .dictionary(let a) = before, case .dictionary(let b) = value {
                stack.append(Pair(old: a, new: b, prefix: path))
            } else if before != value {
                Self.leaves(of: before, prefix: path, into: &paths)
                if case .dictionary = before { Self.leaves(of: value, prefix: path, into: &paths) }
            }
        }
        return paths
    }

    /// Appends the key paths of every leaf of `value` (itself when it is not a dictionary), in
    /// order, walking with a stack of its own.
    private static func leaves(of value: PlistValue, prefix: [String], into paths: inout [SettingsKey]) {
        guard case .dictionary(let dictionary) = value else {
            paths.append(SettingsKey(components: prefix))
            return
        }
        var stack = [(dictionary: dictionary, prefix: prefix, next: 0)]
        while let top = stack.indices.last {
            let index = stack[top].next
            guard index < stack[top].dictionary.count else {
                stack.removeLast()
                continue
            }
            stack[top].next += 1
            let (key, child) = stack[top].dictionary[index]
            let path = stack[top].prefix + [key]
            if case .dictionary(let inner) = child {
                stack.append((inner, path, 0))
            } else {
                paths.append(SettingsKey(components: path))
            }
        }
    }
}

/// Two dictionaries being compared at one key path, and how far the newer one's entries are done.
private struct Pair {
    var old: PlistDictionary
    var new: PlistDictionary
    var prefix: [String]
    var next = 0
}
