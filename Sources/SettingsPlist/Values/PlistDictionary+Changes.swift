extension PlistDictionary {
    /// The key paths of the leaves (values that are not dictionaries) that differ between `old`
    /// and this dictionary: added, removed or changed. Where both hold a dictionary the
    /// comparison goes inside it; where a dictionary and a leaf meet, the leaves on both sides
    /// count. Empty dictionaries have no leaves.
    ///
    /// Paths come in order: this dictionary's keys first, then those only `old` has, level by
    /// level. A key at the same position in both is compared in place (a file saved again keeps
    /// its order), so an unchanged dictionary costs a pass without look-ups. A loop with a stack
    /// of its own: no recursion on the dictionaries' depth.
    ///
    /// ```swift
    /// let old: PlistDictionary = ["a": 1, "n": ["b": 2], "gone": 3]
    /// let new: PlistDictionary = ["a": 1, "n": ["b": 5], "added": 4]
    /// new.changedLeaves(from: old)   // [["n", "b"], ["added"], ["gone"]]
    /// ```
    ///
    /// - Parameter old: the dictionary before.
    /// - Returns: the changed leaves' key paths, each once.
    public func changedLeaves(from old: PlistDictionary) -> [[String]] {
        var paths: [[String]] = []
        var stack = [(old: old, new: self, prefix: [String](), next: 0, matched: 0)]
        while let top = stack.indices.last {
            let index = stack[top].next
            guard index < stack[top].new.count else {
                let done = stack.removeLast()
                if done.matched < done.old.count {
                    for (key, value) in done.old where done.new[key] == nil {
                        Self.leaves(of: value, prefix: done.prefix + [key], into: &paths)
                    }
                }
                continue
            }
            stack[top].next += 1
            let key = stack[top].new.keys[index]
            let value = stack[top].new.values[index]
            let before: PlistValue?
            if index < stack[top].old.count, CodePointKey.equal(stack[top].old.keys[index], key) {
                before = stack[top].old.values[index]
            } else {
                before = stack[top].old[key]
            }
            guard let before else {
                Self.leaves(of: value, prefix: stack[top].prefix + [key], into: &paths)
                continue
            }
            stack[top].matched += 1
            if case .dictionary(let a) = before, case .dictionary(let b) = value {
                stack.append((a, b, stack[top].prefix + [key], 0, 0))
            } else if before != value {
                let path = stack[top].prefix + [key]
                Self.leaves(of: before, prefix: path, into: &paths)
                // A leaf replaced by a leaf is one path; a dictionary on either side adds its own.
                if case .dictionary = value { Self.leaves(of: value, prefix: path, into: &paths) }
                else if case .dictionary = before { paths.append(path) }
            }
        }
        return paths
    }

    private static func leaves(of value: PlistValue, prefix: [String], into paths: inout [[String]]) {
        value.forEachLeaf(at: prefix) { path, _ in paths.append(path) }
    }
}

extension PlistValue {
    /// Calls `body` with the key path and value of each leaf (a value that is not a dictionary)
    /// at or below `prefix`, in order: this value itself when it is not a dictionary. Empty
    /// dictionaries have no leaves. A loop with a stack of its own: no recursion on the depth.
    ///
    /// ```swift
    /// PlistValue.dictionary(["a": 1, "n": ["b": 2]]).forEachLeaf { path, value in print(path, value) }
    /// // ["a"] 1
    /// // ["n", "b"] 2
    /// ```
    ///
    /// - Parameters:
    ///   - prefix: the key path of this value.
    ///   - body: called for each leaf.
    public func forEachLeaf(at prefix: [String] = [], _ body: ([String], PlistValue) throws -> Void) rethrows {
        guard case .dictionary(let dictionary) = self else {
            try body(prefix, self)
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
                try body(path, child)
            }
        }
    }
}
