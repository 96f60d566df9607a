/// A property-list dictionary: string keys mapped to values, in the order they were added.
///
/// Key order is kept so that a hand-edited file read and written again produces a clean diff.
/// Keys are compared by Unicode code points, as CoreFoundation compares them: `"\u{E9}"` and
/// `"e\u{301}"` are two different keys here, though Swift's `String ==` calls them equal.
///
/// ```swift
/// var dict: PlistDictionary = ["name": "Ada", "age": 36]
/// dict["city"] = "London"        // appended at the end
/// dict["name"] = "Ada L."        // replaced in place
/// dict.keys                      // ["name", "age", "city"]
/// ```
///
/// Two dictionaries are equal when they hold the same keys with equal values in the same order.
public struct PlistDictionary: Sendable {
    /// The keys, in order.
    public private(set) var keys: [String]
    /// The values, in the order of ``keys``.
    public private(set) var values: [PlistValue]
    /// Index of each key in `keys`; built only past ``indexThreshold`` entries.
    @usableFromInline var index: [CodePointKey: Int]?

    /// Below this many entries a linear scan beats hashing.
    @usableFromInline static var indexThreshold: Int { 12 }

    /// Creates an empty dictionary.
    public init() {
        keys = []
        values = []
        index = nil
    }

    /// Creates an empty dictionary with room for `capacity` entries.
    public init(minimumCapacity capacity: Int) {
        self.init()
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// Creates a dictionary from key-value pairs, in order.
    ///
    /// - Parameters:
    ///   - pairs: the entries.
    ///   - keepFirst: for a key that appears twice, keep the first value (binary plists)
    ///     rather than the last (XML plists). Either way the key keeps its first position.
    public init<S: Sequence>(_ pairs: S, keepingFirstDuplicate keepFirst: Bool = false)
    where S.Element == (String, PlistValue) {
        self.init(minimumCapacity: pairs.underestimatedCount)
        for (k, v) in pairs {
            if keepFirst {
                if firstIndex(of: k) == nil { append(k, v) }
            } else {
                self[k] = v
            }
        }
    }

    /// The number of entries.
    @inlinable public var count: Int { keys.count }

    /// Whether there are no entries.
    @inlinable public var isEmpty: Bool { keys.isEmpty }

    /// The position of `key` in ``keys``, or `nil`.
    public func firstIndex(of key: String) -> Int? {
        if let index { return index[CodePointKey(key)] }
        // A key written before is usually the very string stored (a small string, or shared
        // storage): one pass comparing representations finds it without reading any bytes.
        var i = 0
        while i < keys.count {
            if CodePointKey.identical(keys[i], key) { return i }
            i += 1
        }
        return keys.firstIndex { CodePointKey.equal($0, key) }
    }

    /// The value for `key`; setting `nil` removes the entry, setting a new key appends it.
    public subscript(key: String) -> PlistValue? {
        get {
            guard let i = firstIndex(of: key) else { return nil }
            return values[i]
        }
        set {
            if let i = firstIndex(of: key) {
                if let newValue { values[i] = newValue } else { remove(at: i) }
            } else if let newValue {
                append(key, newValue)
            }
        }
    }

    /// The key and value at a position.
    public subscript(position: Int) -> (key: String, value: PlistValue) {
        (keys[position], values[position])
    }

    /// Sets (or with `nil` removes) the value for `key` with one look-up, returning the old value.
    ///
    /// - Parameters:
    ///   - value: the new value, or `nil` to remove the entry.
    ///   - key: the key; a new key is appended.
    @discardableResult
    public mutating func replaceValue(_ value: PlistValue?, forKey key: String) -> PlistValue? {
        if let i = firstIndex(of: key) {
            let old = values[i]
            if let value { values[i] = value } else { remove(at: i) }
            return old
        }
        if let value { append(key, value) }
        return nil
    }

    /// Removes the entry for `key` and returns its value, if there was one.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> PlistValue? {
        guard let i = firstIndex(of: key) else { return nil }
        let v = values[i]
        remove(at: i)
        return v
    }

    /// Changes the value for `key` in place: `body` gets the current value (or `nil`) and may
    /// replace it, set it to `nil` to remove the entry, or leave it. A nested dictionary handed to
    /// `body` is uniquely referenced, so changing it does not copy it.
    ///
    /// ```swift
    /// dict.updateValue(forKey: "count") { value in
    ///     value = .integer(PlistInteger((value?.int64Value ?? 0) + 1))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - body: reads and changes the value.
    /// - Returns: what `body` returns.
    public mutating func updateValue<R>(forKey key: String, _ body: (inout PlistValue?) throws -> R) rethrows -> R {
        if let i = firstIndex(of: key) {
            var value: PlistValue? = values[i]
            values[i] = .bool(false)  // drop this reference so `value` is unique while `body` runs
            let result: R
            do {
                result = try body(&value)
            } catch {
                values[i] = value ?? .bool(false)
                if value == nil { remove(at: i) }
                throw error
            }
            if let value { values[i] = value } else { remove(at: i) }
            return result
        }
        var value: PlistValue?
        let result = try body(&value)
        if let value { append(key, value) }
        return result
    }

    /// Removes every entry.
    public mutating func removeAll() {
        keys.removeAll()
        values.removeAll()
        index = nil
    }

    /// Appends an entry without checking for an existing key. The caller knows `key` is new.
    @usableFromInline package mutating func append(_ key: consuming String, _ value: consuming PlistValue) {
        // Consuming parameters: a reader's freshly decoded values move in without a retain.
        if index != nil { index![CodePointKey(copy key)] = keys.count }
        keys.append(key)
        values.append(value)
        if index == nil && keys.count > Self.indexThreshold { rebuildIndex() }
    }

    /// Inserts `value` for a key known to be new, or resolves a duplicate as the format requires.
    ///
    /// Used by the readers: returns `false` when the key was already present.
    @usableFromInline mutating func insertFromReader(_ key: String, _ value: PlistValue, keepFirst: Bool) -> Bool {
        if let i = firstIndex(of: key) {
            if !keepFirst { values[i] = value }
            return false
        }
        append(key, value)
        return true
    }

    private mutating func remove(at i: Int) {
        keys.remove(at: i)
        values.remove(at: i)
        if keys.count > Self.indexThreshold { rebuildIndex() } else { index = nil }
    }

    private mutating func rebuildIndex() {
        // Sized for the reserved capacity, so a dictionary filled by a reader is hashed once.
        var map = [CodePointKey: Int](minimumCapacity: Swift.max(keys.count, keys.capacity))
        for (i, k) in keys.enumerated() { map[CodePointKey(k)] = i }
        index = map
    }

    /// The entries sorted by key (code-point order), for output that must not depend on insertion order.
    public func sortedByKey() -> PlistDictionary {
        let order = keys.indices.sorted { keys[$0].unicodeScalars.lexicographicallyPrecedes(keys[$1].unicodeScalars) }
        var out = PlistDictionary(minimumCapacity: count)
        for i in order { out.append(keys[i], values[i]) }
        return out
    }

    /// Returns a dictionary with `transform` applied to every value, keys and order unchanged.
    public func mapValues(_ transform: (PlistValue) throws -> PlistValue) rethrows -> PlistDictionary {
        var out = self
        out.values = try values.map(transform)
        return out
    }
}

extension PlistDictionary: Sequence {
    /// Iterates the entries in order.
    public func makeIterator() -> AnyIterator<(key: String, value: PlistValue)> {
        var i = 0
        return AnyIterator {
            guard i < keys.count else { return nil }
            defer { i += 1 }
            return (keys[i], values[i])
        }
    }

    public var underestimatedCount: Int { keys.count }
}

extension PlistDictionary: Hashable {
    public static func == (lhs: PlistDictionary, rhs: PlistDictionary) -> Bool {
        let count = lhs.keys.count
        guard count == rhs.keys.count else { return false }
        // Through the arrays' storage, each element borrowed in place (not copied out, retained
        // and released, as indexing and `Array.==` do), and skipping arrays that share storage:
        // a store compares its values with the file's after each save, and a dictionary changed
        // in its values only still shares its keys with the one it was copied from.
        let sameKeys = lhs.keys.withUnsafeBufferPointer { a in
            rhs.keys.withUnsafeBufferPointer { b in
                if a.baseAddress == b.baseAddress { return true }
                for i in 0 ..< count where !CodePointKey.equal(a[i], b[i]) { return false }
                return true
            }
        }
        return sameKeys && PlistValue.equal(lhs.values, rhs.values)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keys.count)
        for k in keys { CodePointKey(k).hash(into: &hasher) }
        hasher.combine(values)
    }
}

extension PlistDictionary: ExpressibleByDictionaryLiteral {
    /// Creates a dictionary from a literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, PlistValue)...) {
        self.init(elements)
    }
}

extension PlistDictionary: CustomStringConvertible {
    public var description: String {
        "[" + zip(keys, values).map { "\"\($0)\": \($1)" }.joined(separator: ", ") + "]"
    }
}

/// A string compared and hashed by its UTF-8 bytes (that is, by code points), not by canonical equivalence.
@usableFromInline struct CodePointKey: Hashable, Sendable {
    @usableFromInline let string: String

    @usableFromInline init(_ string: String) { self.string = string }

    /// Whether two strings have identical representations, which hold identical text: true for
    /// any two equal small strings (stored inline, canonically) and for strings sharing
    /// storage; `false` says nothing. Only a comparison of bits, never a use of them, so it
    /// cannot misbehave if the layout changes: it would merely stop finding matches.
    @inline(__always) @usableFromInline static func identical(_ a: String, _ b: String) -> Bool {
        MemoryLayout<String>.size == MemoryLayout<(UInt64, UInt64)>.size
            && unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
    }

    @usableFromInline static func equal(_ a: String, _ b: String) -> Bool {
        if identical(a, b) { return true }
        guard a.utf8.count == b.utf8.count else { return false }
        // Compare the contiguous UTF-8 bytes directly: much cheaper than iterating the views.
        var a = a, b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in pa.elementsEqual(pb) } }
    }

    @usableFromInline static func == (lhs: CodePointKey, rhs: CodePointKey) -> Bool {
        equal(lhs.string, rhs.string)
    }

    @usableFromInline func hash(into hasher: inout Hasher) {
        var s = string
        s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8)
    }
}
