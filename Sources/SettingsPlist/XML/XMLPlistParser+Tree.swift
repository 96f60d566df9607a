/// Building the value tree: a loop over elements with an explicit stack of open containers.
extension XMLPlistParser {
    /// An element whose content is being read.
    struct Frame {
        enum Kind: UInt8 {
            /// Outside any element: a value delivered here is the document's root.
            case root
            case plist, array, dict
        }

        var kind: Kind
        /// Dictionary: the next element must be a `<key>`. `<plist>`: no value read yet.
        var awaitingKey = true
        /// Where this container's values start in the value stack.
        var valueStart: Int
        /// Where this dictionary's keys start in the key stack.
        var keyStart: Int
        /// The offset of the start tag's `<`, for errors.
        var tagOffset: Int
    }

    /// Parses the root element (its `<` is just before `pos`) and everything inside it.
    /// Whatever follows the root element is not looked at, as in CoreFoundation.
    ///
    /// The loop keeps its position in a local `p` and handles the common shapes (plain start
    /// and end tags, keys and strings without escapes, small decimal integers, booleans) inline;
    /// everything else goes through the general readers, which work on `pos`.
    mutating func parseRootElement() throws(PlistError) -> PlistValue {
        var values = XMLMoveStack<PlistValue>(capacity: 64)
        var keys = XMLMoveStack<String>(capacity: 32)
        var keyHashes = XMLMoveStack<UInt64>(capacity: 32)
        var parents: [Frame] = []
        var current = Frame(kind: .root, valueStart: 0, keyStart: 0, tagOffset: 0)
        var depth = 0   // open arrays and dictionaries; a <plist> does not count, as in CoreFoundation
        var p = pos

        while true {
            // An element starts: its `<` is just before `p`.
            let tagOffset = p - 1
            let tag: XMLPlistTag, isEmpty: Bool
            if count - p >= 8, let plain = Self.plainStartTag(word(at: p)) {
                (tag, isEmpty) = (plain.0, plain.1)
                p += plain.2
            } else {
                pos = p
                (tag, isEmpty) = try readStartTagInGeneral()
                p = pos
            }
            var produced: PlistValue?
            switch current.kind {
            case .dict where current.awaitingKey:
                guard tag == .key else {
                    throw error(.syntax, "expected <key> in <dict>, found <\(tag.name)>", at: tagOffset)
                }
                let (key, hash) = try isEmpty ? ("", XMLStringCache.hash(UnsafeBufferPointer(start: base, count: 0)))
                    : readText(.key, at: &p, hashed: true)
                keys.push(key)
                keyHashes.push(hash)
                current.awaitingKey = false
            case .plist where !current.awaitingKey:
                throw error(.syntax, "<plist> may contain only one value", at: tagOffset)
            default:
                switch tag {
                case .string, .key:
                    produced = .string(isEmpty ? "" : try readText(tag, at: &p, hashed: false).0)
                case .integer where !isEmpty:
                    produced = .integer(try readInteger(at: &p))
                case .true where isEmpty:
                    produced = .bool(true)
                case .false where isEmpty:
                    produced = .bool(false)
                case .array, .dict:
                    if isEmpty {
                        produced = tag == .array ? .array([]) : .dictionary(PlistDictionary())
                    } else {
                        depth += 1
                        guard depth <= maximumDepth else {
                            throw error(.tooDeep, "arrays and dictionaries nested deeper than \(maximumDepth)", at: tagOffset)
                        }
                        parents.append(current)
                        current = Frame(kind: tag == .array ? .array : .dict, valueStart: values.count,
                                        keyStart: keys.count, tagOffset: tagOffset)
                    }
                case .plist:
                    guard !isEmpty else { throw error(.syntax, "empty <plist/>", at: tagOffset) }
                    parents.append(current)
                    current = Frame(kind: .plist, valueStart: values.count, keyStart: keys.count, tagOffset: tagOffset)
                default:
                    pos = p
                    produced = try readScalar(tag, isEmpty: isEmpty, tagOffset: tagOffset)
                    p = pos
                }
            }

            // Deliver finished values; read on inside the innermost container until the next
            // element starts, closing containers as their end tags come.
            while true {
                if let value = produced.take() {
                    switch current.kind {
                    case .root: return value
                    case .array: break
                    case .dict: current.awaitingKey = true
                    case .plist: current.awaitingKey = false
                    }
                    values.push(value)
                }
                p = skipSpace(from: p)
                if p + 1 < count, base[p] == UInt8(ascii: "<") {
                    let next = base[p + 1]
                    if next != UInt8(ascii: "/") && next != UInt8(ascii: "!") && next != UInt8(ascii: "?") {
                        p += 1
                        break
                    }
                }
                pos = p
                guard case .endTag = try nextContent() else {
                    p = pos
                    break
                }
                produced = try closeContainer(current, &values, &keys, &keyHashes)
                p = pos
                if current.kind != .plist { depth -= 1 }
                guard let parent = parents.popLast() else { throw error(.syntax, "unexpected end tag", at: pos) }
                current = parent
            }
        }
    }

    /// Reads a non-empty `<key>` or `<string>` whose start tag ends just before `p`, through its
    /// end tag; returns the string and, when `hashed` or cached, the hash of its bytes.
    @inline(__always)
    private mutating func readText(_ tag: XMLPlistTag, at p: inout Int, hashed: Bool) throws(PlistError) -> (String, UInt64) {
        let end = plainTextEnd(from: p)
        // Fast path: no entity or CDATA, and a plain end tag right after.
        if end + 1 < count, base[end] == UInt8(ascii: "<"), base[end + 1] == UInt8(ascii: "/") {
            let closing = plainEndTag(tag, at: end)
            if closing > 0 {
                let result = try makeString(UnsafeBufferPointer(start: base + p, count: end - p), at: p, hashed: hashed,
                                            overread: p + 8 <= count)
                p = end + closing
                return result
            }
        }
        pos = p
        let text = try scanText()
        let result = try makeString(text, hashed: hashed)
        try expectEndTag(tag)
        p = pos
        return result
    }

    /// Reads a non-empty `<integer>` whose start tag ends just before `p`, through its end tag.
    /// Fast path: an optional `-` and up to 18 decimal digits (which cannot overflow).
    @inline(__always)
    private mutating func readInteger(at p: inout Int) throws(PlistError) -> PlistInteger {
        var i = p
        let negative = i < count && base[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let digitsStart = i
        var value: Int64 = 0
        while i < count, i - digitsStart < 18 {
            let d = base[i] &- 0x30
            guard d < 10 else { break }
            value = value * 10 + Int64(d)
            i += 1
        }
        if i > digitsStart, i < count, base[i] == UInt8(ascii: "<") {
            let closing = plainEndTag(.integer, at: i)
            if closing > 0 {
                p = i + closing
                return PlistInteger(negative ? -value : value)
            }
        }
        pos = p
        let general = try readInteger()
        p = pos
        return general
    }

    /// Reads a scalar element's content and end tag.
    @inline(__always)
    private mutating func readScalar(_ tag: XMLPlistTag, isEmpty: Bool, tagOffset: Int) throws(PlistError) -> PlistValue {
        switch tag {
        case .string, .key:
            return .string(isEmpty ? "" : try readString(tag))
        case .true, .false:
            if !isEmpty {
                do throws(PlistError) {
                    try expectEndTag(tag)
                } catch {
                    throw self.error(.invalidValue, "<\(tag.name)> must be empty", at: tagOffset)
                }
            }
            return .bool(tag == .true)
        default:
            guard !isEmpty else { throw error(.invalidValue, "empty <\(tag.name)/>", at: tagOffset) }
        }
        switch tag {
        case .integer: return .integer(try readInteger())
        case .real: return .real(try readReal())
        case .date: return .date(try readDate())
        default: return .data(try readData())
        }
    }

    /// Reads the end tag of `frame`'s element (at `pos`) and builds its value from the stacks.
    private mutating func closeContainer(_ frame: Frame, _ values: inout XMLMoveStack<PlistValue>,
                                         _ keys: inout XMLMoveStack<String>, _ keyHashes: inout XMLMoveStack<UInt64>) throws(PlistError) -> PlistValue {
        switch frame.kind {
        case .array:
            try expectEndTag(.array)
            return .array(values.popArray(from: frame.valueStart))
        case .dict:
            guard frame.awaitingKey else {
                throw error(.syntax, "<key>\(keys.last ?? "")</key> has no value", at: pos)
            }
            try expectEndTag(.dict)
            let distinct = keyHashes.withBuffer(from: frame.keyStart) { Self.distinct($0) }
            let dict = Self.makeDictionary(keys: &keys, values: &values, keyStart: frame.keyStart,
                                           valueStart: frame.valueStart, distinct: distinct)
            keyHashes.forgetMoved(downTo: frame.keyStart)
            return dict
        case .plist:
            guard !frame.awaitingKey, values.count > frame.valueStart else {
                throw error(.syntax, "<plist> contains no value", at: frame.tagOffset)
            }
            try expectEndTag(.plist)
            return values.pop()
        case .root:
            throw error(.syntax, "unexpected end tag", at: pos)
        }
    }

    /// A dictionary from the keys and values on top of the stacks (which are emptied down to
    /// `keyStart` / `valueStart`). A repeated key keeps its first position and its last value.
    /// A dictionary whose only key is `CF$UID` with a number becomes a UID, as CoreFoundation
    /// reads keyed-archiver references.
    ///
    /// - Parameter distinct: the keys are known to be all different (no lookups needed).
    static func makeDictionary(keys: inout XMLMoveStack<String>, values: inout XMLMoveStack<PlistValue>,
                               keyStart: Int, valueStart: Int, distinct: Bool) -> PlistValue {
        let n = keys.count - keyStart
        var dict = PlistDictionary(minimumCapacity: n)
        if distinct, n > PlistDictionary.indexThreshold {
            // Size the key index once: `append` then fills it as it goes, instead of building
            // it at the threshold and growing it (rehashing) along the way.
            dict.index = [CodePointKey: Int](minimumCapacity: n)
        }
        for i in 0 ..< n {
            let key = keys.take(keyStart + i)
            let value = values.take(valueStart + i)
            if distinct {
                dict.append(key, value)
            } else {
                _ = dict.insertFromReader(key, value, keepFirst: false)
            }
        }
        keys.forgetMoved(downTo: keyStart)
        values.forgetMoved(downTo: valueStart)
        if dict.count == 1, CodePointKey.equal(dict.keys[0], "CF$UID"), let uid = uid(dict.values[0]) {
            return .uid(uid)
        }
        return .dictionary(dict)
    }

    /// Whether all the hashes differ (then the keys do too). Equal hashes only send the
    /// dictionary down the path that compares keys.
    ///
    /// For small dictionaries a 256-bit filter on the top hash byte finds the (usual)
    /// all-different case in one pass; only a hash whose filter bit is already set is compared
    /// with the earlier ones.
    static func distinct(_ hashes: UnsafeBufferPointer<UInt64>) -> Bool {
        let n = hashes.count
        if n > 24 {
            // Large dictionaries: sort, then compare neighbours (no quadratic worst case).
            let sorted = hashes.sorted()
            for i in 1 ..< n where sorted[i] == sorted[i - 1] { return false }
            return true
        }
        var filter: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for i in 0 ..< n {
            let h = hashes[i]
            let bit: UInt64 = 1 << ((h >> 56) & 63)
            let seen: Bool
            switch h >> 62 {
            case 0: seen = filter.0 & bit != 0; filter.0 |= bit
            case 1: seen = filter.1 & bit != 0; filter.1 |= bit
            case 2: seen = filter.2 & bit != 0; filter.2 |= bit
            default: seen = filter.3 & bit != 0; filter.3 |= bit
            }
            if seen {
                for j in 0 ..< i where hashes[j] == h { return false }
            }
        }
        return true
    }

    /// CoreFoundation reads the number with `CFNumberGetValue(..., kCFNumberSInt32Type, ...)`:
    /// an integer keeps its low 32 bits, a real is truncated toward zero. Reals outside the
    /// 32-bit range (undefined in C) leave the dictionary as it is.
    static func uid(_ value: PlistValue) -> UInt64? {
        switch value {
        case .integer(let i):
            return UInt64(UInt32(truncatingIfNeeded: i.bits))
        case .real(let d):
            guard d.isFinite, d > -2_147_483_649, d < 2_147_483_648 else { return nil }
            return UInt64(UInt32(bitPattern: Int32(d)))
        default:
            return nil
        }
    }
}

/// A stack whose elements can be moved out without reference-count traffic: the parser pushes
/// each value once and moves it into its array or dictionary once.
struct XMLMoveStack<Element>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    /// The number of elements, counting any moved out by ``take(_:)`` but not yet forgotten.
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    @inline(__always)
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    private mutating func grow() {
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity *= 2
    }

    var last: Element? { count > 0 ? base[count - 1] : nil }

    /// Removes and returns the top element.
    mutating func pop() -> Element {
        count -= 1
        return (base + count).move()
    }

    /// Moves the elements from `start` to the top into an array and removes them.
    mutating func popArray(from start: Int) -> [Element] {
        let n = count - start
        guard n > 0 else { return [] }
        let source = base + start
        count = start
        return [Element](unsafeUninitializedCapacity: n) { buffer, initialized in
            if let target = buffer.baseAddress {
                target.moveInitialize(from: source, count: n)
                initialized = n
            } else {
                source.deinitialize(count: n)
            }
        }
    }

    /// Moves out the element at `index`. The caller must then call ``forgetMoved(downTo:)``
    /// for a range covering every slot it moved from, before any other use of those slots.
    @inline(__always)
    mutating func take(_ index: Int) -> Element {
        (base + index).move()
    }

    /// Calls `body` with the elements from `start` to the top.
    func withBuffer<R>(from start: Int, _ body: (UnsafeBufferPointer<Element>) -> R) -> R {
        body(UnsafeBufferPointer(start: base + start, count: count - start))
    }

    /// Drops the slots from `start` to the top, whose elements were all moved out (or are
    /// trivial values that need no clean-up).
    mutating func forgetMoved(downTo start: Int) {
        count = start
    }
}
