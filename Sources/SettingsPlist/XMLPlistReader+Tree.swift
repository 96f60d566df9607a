/// Building the value tree: a loop over elements with an explicit stack of open containers.
extension XMLPlistParser {
    /// An element whose content is being read.
    struct Frame {
        enum Kind { case plist, array, dict }
        var kind: Kind
        /// Where this container's values start in the value stack.
        var valueStart: Int
        /// Where this dictionary's keys start in the key stack.
        var keyStart: Int
        /// The offset of the start tag's `<`, for errors.
        var tagOffset: Int
        /// Dictionary: the next element must be a `<key>`. `<plist>`: no value read yet.
        var awaitingKey = true
    }

    /// The containers being read and the values and keys read so far inside them.
    struct Stacks {
        var frames: [Frame] = []
        var values: [PlistValue] = []
        var keys: [String] = []
        /// Open arrays and dictionaries (a `<plist>` inside does not count, as in CoreFoundation).
        var depth = 0

        init() {
            frames.reserveCapacity(16)
            values.reserveCapacity(64)
            keys.reserveCapacity(32)
        }

        /// Hands a finished value to the innermost open container; returns it when there is none
        /// (it is the document's root value).
        @inline(__always)
        mutating func deliver(_ value: PlistValue) -> PlistValue? {
            guard !frames.isEmpty else { return value }
            values.append(value)
            let top = frames.count - 1
            switch frames[top].kind {
            case .dict: frames[top].awaitingKey = true
            case .plist: frames[top].awaitingKey = false
            case .array: break
            }
            return nil
        }
    }

    /// Parses the root element (its `<` is just before `pos`) and everything inside it.
    /// Whatever follows the root element is not looked at, as in CoreFoundation.
    mutating func parseRootElement() throws(PlistError) -> PlistValue {
        var stacks = Stacks()
        while true {
            if let root = try parseElement(&stacks) { return root }
            // Read what follows inside the innermost open container, closing containers as
            // their end tags come, until the next element starts.
            while case .endTag = try nextContent() {
                if let root = try closeContainer(&stacks) { return root }
            }
        }
    }

    /// Parses one element whose `<` is just before `pos`: a scalar is read whole and delivered, a
    /// container is opened. Returns the root value once the document's root is complete.
    @inline(__always)
    private mutating func parseElement(_ stacks: inout Stacks) throws(PlistError) -> PlistValue? {
        let tagOffset = pos - 1
        let (tag, isEmpty) = try readStartTag()
        if let top = stacks.frames.last {
            switch top.kind {
            case .dict where top.awaitingKey:
                guard tag == .key else {
                    throw error(.syntax, "expected <key> in <dict>, found <\(tag.name)>", at: tagOffset)
                }
                stacks.keys.append(isEmpty ? "" : try readString(.key))
                stacks.frames[stacks.frames.count - 1].awaitingKey = false
                return nil
            case .plist where !top.awaitingKey:
                throw error(.syntax, "<plist> may contain only one value", at: tagOffset)
            default:
                break
            }
        }
        let value: PlistValue
        switch tag {
        case .string, .key:
            value = .string(isEmpty ? "" : try readString(tag))
        case .integer:
            guard !isEmpty else { throw error(.invalidValue, "empty <integer/>", at: tagOffset) }
            value = .integer(try readInteger())
        case .real:
            guard !isEmpty else { throw error(.invalidValue, "empty <real/>", at: tagOffset) }
            value = .real(try readReal())
        case .true, .false:
            if !isEmpty {
                do throws(PlistError) {
                    try expectEndTag(tag)
                } catch {
                    throw self.error(.invalidValue, "<\(tag.name)> must be empty", at: tagOffset)
                }
            }
            value = .bool(tag == .true)
        case .date:
            guard !isEmpty else { throw error(.invalidValue, "empty <date/>", at: tagOffset) }
            value = .date(try readDate())
        case .data:
            guard !isEmpty else { throw error(.invalidValue, "empty <data/>", at: tagOffset) }
            value = .data(try readData())
        case .array, .dict:
            if isEmpty {
                value = tag == .array ? .array([]) : .dictionary(PlistDictionary())
            } else {
                stacks.depth += 1
                guard stacks.depth <= maximumDepth else {
                    throw error(.tooDeep, "arrays and dictionaries nested deeper than \(maximumDepth)", at: tagOffset)
                }
                stacks.frames.append(Frame(kind: tag == .array ? .array : .dict, valueStart: stacks.values.count,
                                           keyStart: stacks.keys.count, tagOffset: tagOffset))
                return nil
            }
        case .plist:
            guard !isEmpty else { throw error(.syntax, "empty <plist/>", at: tagOffset) }
            stacks.frames.append(Frame(kind: .plist, valueStart: stacks.values.count,
                                       keyStart: stacks.keys.count, tagOffset: tagOffset))
            return nil
        }
        return stacks.deliver(value)
    }

    /// Reads the end tag of the innermost open container (at `pos`), builds its value and
    /// delivers it. Returns the root value once the document's root is complete.
    private mutating func closeContainer(_ stacks: inout Stacks) throws(PlistError) -> PlistValue? {
        guard let frame = stacks.frames.popLast() else {
            throw error(.syntax, "unexpected end tag", at: pos)
        }
        let value: PlistValue
        switch frame.kind {
        case .plist:
            guard !frame.awaitingKey, let inner = stacks.values.popLast() else {
                throw error(.syntax, "<plist> contains no value", at: frame.tagOffset)
            }
            try expectEndTag(.plist)
            value = inner
        case .array:
            try expectEndTag(.array)
            value = .array(Array(stacks.values[frame.valueStart...]))
            stacks.values.removeSubrange(frame.valueStart...)
            stacks.depth -= 1
        case .dict:
            guard frame.awaitingKey else {
                throw error(.syntax, "<key>\(stacks.keys.last ?? "")</key> has no value", at: pos)
            }
            try expectEndTag(.dict)
            value = Self.makeDictionary(keys: stacks.keys[frame.keyStart...], values: stacks.values[frame.valueStart...])
            stacks.keys.removeSubrange(frame.keyStart...)
            stacks.values.removeSubrange(frame.valueStart...)
            stacks.depth -= 1
        }
        return stacks.deliver(value)
    }

    /// A dictionary from parallel keys and values; a repeated key keeps its first position and
    /// its last value. A dictionary whose only key is `CF$UID` with a number becomes a UID, as
    /// CoreFoundation reads keyed-archiver references.
    static func makeDictionary(keys: ArraySlice<String>, values: ArraySlice<PlistValue>) -> PlistValue {
        var dict = PlistDictionary(minimumCapacity: keys.count)
        var v = values.startIndex
        for key in keys {
            _ = dict.insertFromReader(key, values[v], keepFirst: false)
            v += 1
        }
        if dict.count == 1, CodePointKey.equal(dict.keys[0], "CF$UID"), let uid = uid(dict.values[0]) {
            return .uid(uid)
        }
        return .dictionary(dict)
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
