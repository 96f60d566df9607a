import SettingsPlist

extension PlistDictionary {
    /// The value at a key path through nested dictionaries, or `nil` if any step is missing or
    /// is not a dictionary. Walks the path in a loop: no recursion on the path's length.
    func value(at path: some Collection<String>) -> PlistValue? {
        guard !path.isEmpty else { return nil }
        var current = self
        var value: PlistValue?
        for key in path {
            if value != nil {
                guard case .dictionary(let child)? = value else { return nil }
                current = child
            }
            value = current[key]
            if value == nil { return nil }
        }
        return value
    }

    /// Sets (or with `nil` removes) the value at a key path, creating intermediate dictionaries.
    /// A non-dictionary value in the way is replaced by a dictionary when setting.
    ///
    /// Walks the path in a loop (no recursion on its length): each dictionary on the way is taken
    /// out of its parent, so it stays uniquely referenced and is changed in place, then put back.
    ///
    /// - Returns: the previous value at the path.
    @discardableResult
    package mutating func setValue(_ newValue: PlistValue?, at path: ArraySlice<String>) -> PlistValue? {
        guard let last = path.last else { return nil }
        if path.count == 1 { return replaceValue(newValue, forKey: last) }
        // Parents with the key their child was taken from, outermost first.
        var parents: [(dictionary: PlistDictionary, key: String)] = []
        parents.reserveCapacity(path.count - 1)
        var current = self
        self = PlistDictionary()  // `current` is now the only reference
        var old: PlistValue?
        var reachedEnd = true
        for key in path.dropLast() {
            var child: PlistDictionary?
            current.updateValue(forKey: key) { slot in
                if case .dictionary(let existing)? = slot {
                    slot = .bool(false)  // drop this reference so `child` is unique; put back below
                    child = existing
                }
            }
            if child == nil {
                guard newValue != nil else {  // nothing to remove below a missing namespace
                    reachedEnd = false
                    break
                }
                child = PlistDictionary()
            }
            parents.append((current, key))
            current = child ?? PlistDictionary()
        }
        if reachedEnd { old = current.replaceValue(newValue, forKey: last) }
        while let (parent, key) = parents.popLast() {
            var parent = parent
            parent[key] = .dictionary(current)
            current = parent
        }
        self = current
        return old
    }
}

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
