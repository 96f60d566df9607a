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
            // The frame's dictionaries are taken once per visit (not copied out of the stack for
            // each key), and its place kept there only when a nested pair is visited first.
            let (before, after, prefix) = (stack[top].old, stack[top].new, stack[top].prefix)
            var index = stack[top].next
            var matched = stack[top].matched
            var nested: (PlistDictionary, PlistDictionary, [String])?
            while index < after.count {
                let key = after.keys[index]
                let value = after.values[index]
                let was: PlistValue?
                if index < before.count, CodePointKey.equal(before.keys[index], key) {
                    was = before.values[index]
                } else {
                    was = before[key]
                }
                index += 1
                guard let was else {
                    Self.leaves(of: value, prefix: prefix + [key], into: &paths)
                    continue
                }
                matched += 1
                if case .dictionary(let a) = was, case .dictionary(let b) = value {
                    nested = (a, b, prefix + [key])
                    break
                } else if was != value {
                    let path = prefix + [key]
                    Self.leaves(of: was, prefix: path, into: &paths)
                    // A leaf replaced by a leaf is one path; a dictionary on either side adds its own.
                    if case .dictionary = value { Self.leaves(of: value, prefix: path, into: &paths) }
                    else if case .dictionary = was { paths.append(path) }
                }
            }
            if let (a, b, path) = nested {
                stack[top].next = index
                stack[top].matched = matched
                stack.append((a, b, path, 0, 0))
                continue
            }
            stack.removeLast()
            if matched < before.count {
                for (key, value) in before where after[key] == nil {
                    Self.leaves(of: value, prefix: prefix + [key], into: &paths)
                }
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
