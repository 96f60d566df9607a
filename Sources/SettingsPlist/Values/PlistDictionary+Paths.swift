extension PlistDictionary {
    /// The value at a key path through nested dictionaries, or `nil` if any step is missing or
    /// is not a dictionary. Walks the path in a loop: no recursion on the path's length.
    package func value(at path: some Collection<String>) -> PlistValue? {
        value(walking: path)
    }

    /// ``value(at:)`` for a key's components (the store's reads and writes): not generic, so a
    /// caller in another module does not walk the path through unspecialized generic code
    /// (measured: most of an `@Setting` write's instructions).
    package func value(at path: [String]) -> PlistValue? {
        value(walking: path)
    }

    /// ``value(at:)`` for part of a key's components.
    package func value(at path: ArraySlice<String>) -> PlistValue? {
        value(walking: path)
    }

    /// The one walk of ``value(at:)``, specialised in this module for each of its overloads.
    @inline(__always)
    private func value(walking path: some Collection<String>) -> PlistValue? {
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
    /// A non-dictionary value in the way is replaced by a dictionary when setting (a writer that
    /// refuses that looks with ``firstNonDictionary(on:)`` first).
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

    /// This dictionary laid over `lower`: keys of both, this one's values winning, and where both
    /// hold a dictionary, the two merged the same way (TFOptionsKit's deep merge). A loop with
    /// a stack of its own: no recursion on the dictionaries' depth.
    package func merged(over lower: PlistDictionary) -> PlistDictionary {
        /// A dictionary being merged: this side's, the result so far (starting from the lower
        /// side's), the key it goes back under, and how far this side's entries are done.
        struct Frame {
            var mine: PlistDictionary
            var out: PlistDictionary
            var key: String
            var next = 0
        }
        var stack = [Frame(mine: self, out: lower, key: "")]
        while let top = stack.indices.last {
            let index = stack[top].next
            guard index < stack[top].mine.count else {
                let done = stack.removeLast()
                guard let parent = stack.indices.last else { return done.out }
                stack[parent].out[done.key] = .dictionary(done.out)
                continue
            }
            stack[top].next += 1
            let (key, value) = stack[top].mine[index]
            if case .dictionary(let mine) = value, case .dictionary(let theirs)? = stack[top].out[key] {
                stack.append(Frame(mine: mine, out: theirs, key: key))
            } else {
                stack[top].out[key] = value
            }
        }
        return lower
    }
}

extension PlistDictionary {
    /// The first value on the way to the last component of `path` that is not a dictionary (so a
    /// value cannot be set below it without replacing it), with the components up to it.
    package func firstNonDictionary(on path: some Collection<String>) -> (prefix: [String], value: PlistValue)? {
        var current = self
        var prefix: [String] = []
        for key in path.dropLast() {
            prefix.append(key)
            switch current[key] {
            case .dictionary(let child)?: current = child
            case nil: return nil
            case let other?: return (prefix, other)
            }
        }
        return nil
    }
}
