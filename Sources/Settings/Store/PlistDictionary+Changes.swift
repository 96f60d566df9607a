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
    /// The settings keys of the leaves that differ between `old` and this dictionary
    /// (``PlistDictionary/changedLeaves(from:)``, in its order).
    func changedLeafPaths(from old: PlistDictionary) -> [SettingsKey] {
        changedLeaves(from: old).map { SettingsKey(components: $0) }
    }
}

/// Two dictionaries being compared at one key path, and how far the newer one's entries are done.
private struct Pair {
    var old: PlistDictionary
    var new: PlistDictionary
    var prefix: [String]
    var next = 0
}
