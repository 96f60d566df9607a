#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes objects from the top object down, sharing what the file shares and detecting cycles.
///
/// A pre-pass counts the references to every object. Objects referenced more than once (keys
/// repeated in every dictionary, a DAG of containers) are decoded once and then reused, so the
/// time stays linear in the file size; objects referenced once are never cached. A container is
/// marked in progress while its children decode: meeting it again on the way down is a cycle.
///
/// Sharing keeps decoding linear, but the value it builds is a tree: a DAG of 40 levels, each
/// object referring to the next twice, is 296 bytes yet stands for 2^40 values, and hashing,
/// comparing or writing that tree would never end. So the decoder adds up the *expanded* size
/// as it goes (8 per value, plus the UTF-8 bytes of each string and key and the bytes of each
/// data, a reused object counting in full each time) and refuses a file whose value would exceed ``expansionLimit(forFileSize:)``:
/// every later operation on a decoded value is then linear in the file size.
/// Dictionary keys go through a table that gives each distinct key text a small number, so
/// duplicate keys are found without comparing strings.
struct BinaryPlistDecoder {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let layout: BinaryPlistLayout
    private let maximumDepth: Int
    /// Objects end before this offset (the start of the offset table).
    private let limit: Int
    /// The largest expanded size allowed, and the expanded size decoded so far.
    private let expansionLimit: Int
    private var expanded = 0

    /// Everything known per object, in one array: following a reference then costs one cache
    /// miss rather than one per property.
    private var entries: [Entry]
    /// Decoded objects referenced more than once, with the expanded size of each.
    private var cache: [PlistValue] = []
    private var cacheSizes: [Int] = []
    private var keyTable = BinaryPlistKeyTable()
    private var keyTexts: [String] = []
    /// Per key number, the expanded size of one use of the key (8 plus its UTF-8 bytes).
    private var keySizes: [Int] = []
    /// Per key number, the dictionary (by `dictionarySerial`) that last used it: a duplicate test.
    private var keyLastSeen: [Int] = []
    private var dictionarySerial = 0
    /// Key numbers of the dictionaries being decoded, innermost last; `-1` marks a duplicate.
    private var pendingKeys: [Int32] = []

    private struct Entry {
        /// Where the object starts.
        var offset: UInt32
        /// The low two bits count references (0, 1, 2 = more); ``inProgress`` marks a container
        /// being decoded; from ``cached`` up, the position of the decoded value in `cache`.
        var state: UInt32
        /// For an object used as a key: its number in `keyTexts`, else `-1`.
        var key: Int32

        static let shared: UInt32 = 2
        static let inProgress: UInt32 = 4
        static let cached: UInt32 = 8

        var isShared: Bool { state & 3 == Self.shared }
    }

    /// The expanded size a value read from `fileSize` bytes may have: 32 times the file, and at
    /// least 16 MiB. Files without shared containers stay far below it (each value costs at
    /// least 3 bytes of file for its 8); only heavy reuse of containers or long strings reaches it.
    static func expansionLimit(forFileSize fileSize: Int) -> Int {
        // Capped so that the running total, which stops at the first addition past it, cannot overflow.
        Swift.max(16 << 20, Swift.min(fileSize, Int.max / 64) * 32)
    }

    /// The expanded size of a value with `payload` bytes of text or data.
    @inline(__always)
    static func expandedSize(payload: Int) -> Int { 8 &+ payload }

    /// Data objects longer than this are read as empty (see ``PlistReadOptions``).
    var skippingDataLongerThan: Int?
    /// Of the top dictionary, only these keys' values are decoded (`nil`: all).
    var onlyTopLevelKeys: Set<String>?

    init(_ bytes: UnsafeBufferPointer<UInt8>, layout: BinaryPlistLayout, maximumDepth: Int, expansionLimit: Int) {
        self.bytes = bytes
        self.layout = layout
        self.maximumDepth = maximumDepth
        self.expansionLimit = expansionLimit
        self.limit = layout.tableOffset
        self.entries = layout.offsets.map { Entry(offset: $0, state: 0, key: -1) }
        countReferences()
    }

    mutating func decodeTop() throws(PlistError) -> PlistValue {
        try decodeObject(identity(layout.topObject), depth: 0)
    }

    /// The object that stands for `index`: itself, or the first object at the same offset.
    @inline(__always)
    private func identity(_ index: Int) -> Int {
        layout.canonical.isEmpty ? index : layout.canonical[index]
    }

    // MARK: Sharing

    /// Counts references from every container (reachable or not, each offset once), without
    /// throwing: malformed containers are skipped here and reported if decoding reaches them.
    private mutating func countReferences() {
        entries[identity(layout.topObject)].state = 1
        let (refSize, objectCount, canonical) = (layout.refSize, layout.objectCount, layout.canonical)
        let bytes = self.bytes
        let limit = self.limit
        entries.withUnsafeMutableBufferPointer { entries in
            for index in 0 ..< objectCount where canonical.isEmpty || canonical[index] == index {
                let offset = Int(entries[index].offset)
                guard offset >= BinaryPlistLayout.headerSize else { continue }
                let marker = bytes[offset]
                guard marker >> 4 == 0xA || marker >> 4 == 0xD,
                      let (elements, refs) = Self.peekCount(bytes, at: offset, limit: limit)
                else { continue }
                let count = marker >> 4 == 0xD ? elements.multipliedReportingOverflow(by: 2).partialValue : elements
                guard count >= 0, count <= (limit - refs) / refSize else { continue }
                for i in 0 ..< count {
                    let position = refs &+ i &* refSize
                    let ref = refSize == 1 ? Int(bytes[position]) : Int(truncatingIfNeeded: bytes.loadBigEndian(at: position, size: refSize))
                    guard ref >= 0, ref < objectCount else { continue }
                    let target = canonical.isEmpty ? ref : canonical[ref]
                    if entries[target].state < Entry.shared { entries[target].state &+= 1 }
                }
            }
        }
    }

    /// `readCount` for the pre-pass: `nil` instead of an error.
    private static func peekCount(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, limit: Int) -> (count: Int, payload: Int)? {
        let nibble = Int(bytes[offset] & 0x0F)
        guard nibble == 0x0F else { return (nibble, offset + 1) }
        let intOffset = offset + 1
        guard intOffset < limit, bytes[intOffset] >> 4 == 0x1 else { return nil }
        let exponent = bytes[intOffset] & 0x0F
        guard exponent <= 3 else { return nil }
        let width = 1 << Int(exponent)
        guard width <= limit - intOffset - 1 else { return nil }
        let value = bytes.loadBigEndian(at: intOffset + 1, size: width)
        guard value <= UInt64(Int.max) else { return nil }
        return (Int(value), intOffset + 1 + width)
    }

    /// Keeps `value` for later references when more than one reference points to it, with its
    /// expanded size: what the running total grew by since `expandedBefore`.
    @inline(__always)
    private mutating func finish(_ index: Int, _ value: PlistValue, expandedBefore: Int) -> PlistValue {
        if entries[index].isShared {
            entries[index].state = Entry.cached + UInt32(truncatingIfNeeded: cache.count)
            cache.append(value)
            cacheSizes.append(expanded - expandedBefore)
        } else {
            entries[index].state &= ~Entry.inProgress
        }
        return value
    }

    // MARK: Objects

    /// Adds `size` to the expanded size, refusing the file past the limit.
    @inline(__always)
    private mutating func expand(by size: Int, at offset: Int) throws(PlistError) {
        expanded &+= size
        guard expanded <= expansionLimit else { throw tooLarge(at: offset) }
    }

    private func tooLarge(at offset: Int) -> PlistError {
        PlistError(
            .tooLarge,
            "binary plist of \(bytes.count) bytes expands to more than \(expansionLimit) bytes "
                + "(objects referred to many times count once per reference)",
            at: .offset(offset))
    }

    /// Decodes object `index` (already mapped by `identity`), nested inside `depth` containers.
    private mutating func decodeObject(_ index: Int, depth: Int) throws(PlistError) -> PlistValue {
        let entry = entries[index]
        if entry.state >= Entry.cached {
            let slot = Int(entry.state - Entry.cached)
            try expand(by: cacheSizes[slot], at: Int(entry.offset))
            return cache[slot]
        }
        if entry.state & Entry.inProgress != 0 {
            throw PlistError(.cycle, "object \(index) contains itself", at: .offset(Int(entry.offset)))
        }
        let offset = try objectStart(entry.offset, index)
        let marker = bytes[offset]
        let before = expanded
        try expand(by: Self.expandedSize(payload: 0), at: offset)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            case 0x00: throw PlistError(.corruptBinary, "null object (0x00) has no property-list equivalent", at: .offset(offset))
            case 0x0F: throw PlistError(.corruptBinary, "fill byte (0x0F) is not an object", at: .offset(offset))
            default: throw unknownMarker(marker, at: offset)
            }
        case 0x1: return .integer(try readInteger(at: offset))
        case 0x2: return .real(try readReal(at: offset))
        case 0x3: return .date(Date(timeIntervalSinceReferenceDate: try readDate(at: offset)))
        case 0x4:
            let data = try readData(at: offset)
            try expand(by: data.count, at: offset)
            return finish(index, .data(data), expandedBefore: before)
        case 0x5, 0x6:
            let payload = try stringPayload(at: offset)
            let text = marker >> 4 == 0x5 ? BinaryPlistText.ascii(payload) : try BinaryPlistText.utf16BigEndian(payload, at: offset)
            try expand(by: text.utf8.count, at: offset)
            return finish(index, .string(text), expandedBefore: before)
        case 0x8: return .uid(try readUID(at: offset))
        case 0xA: return try decodeArray(index, at: offset, depth: depth, expandedBefore: before)
        case 0xD: return try decodeDictionary(index, at: offset, depth: depth, expandedBefore: before)
        default: throw unknownMarker(marker, at: offset)
        }
    }

    /// The offset of object `index`, checked to lie in the object area.
    @inline(__always)
    private func objectStart(_ start: UInt32, _ index: Int) throws(PlistError) -> Int {
        let offset = Int(start)
        guard offset >= BinaryPlistLayout.headerSize else {
            throw PlistError(.corruptBinary, "object \(index) starts at \(offset), inside the header", at: .offset(offset))
        }
        return offset
    }

    private func unknownMarker(_ marker: UInt8, at offset: Int) -> PlistError {
        PlistError(.corruptBinary, "unknown object marker 0x\(String(marker, radix: 16, uppercase: true))", at: .offset(offset))
    }

    // MARK: Containers

    private mutating func decodeArray(_ index: Int, at offset: Int, depth: Int, expandedBefore: Int) throws(PlistError) -> PlistValue {
        try checkDepth(depth, at: offset)
        let (count, refs) = try readCount(at: offset)
        guard count <= (limit - refs) / layout.refSize else {
            throw truncated("array of \(count) elements", at: offset)
        }
        entries[index].state |= Entry.inProgress
        var elements = [PlistValue]()
        elements.reserveCapacity(count)
        var position = refs
        for _ in 0 ..< count {
            elements.append(try decodeObject(readRef(at: position), depth: depth + 1))
            position += layout.refSize
        }
        return finish(index, .array(elements), expandedBefore: expandedBefore)
    }

    /// Keys first, as CoreFoundation reads them: each must be a string; a key seen before in
    /// this dictionary keeps its first value (CF adds only absent keys). Values of duplicates
    /// are still decoded, so an error in them is reported as CF reports it.
    private mutating func decodeDictionary(_ index: Int, at offset: Int, depth: Int, expandedBefore: Int) throws(PlistError) -> PlistValue {
        try checkDepth(depth, at: offset)
        let (count, refs) = try readCount(at: offset)
        // `count` key refs then `count` value refs; halving the room first cannot overflow.
        guard count <= (limit - refs) / layout.refSize / 2 else {
            throw truncated("dictionary of \(count) entries", at: offset)
        }
        entries[index].state |= Entry.inProgress
        dictionarySerial += 1
        let base = pendingKeys.count
        var distinct = 0
        for i in 0 ..< count {
            let number = try keyNumber(readRef(at: refs + i * layout.refSize))
            if keyLastSeen[Int(number)] == dictionarySerial {
                pendingKeys.append(-1)
            } else {
                keyLastSeen[Int(number)] = dictionarySerial
                pendingKeys.append(number)
                distinct += 1
            }
        }
        var dictionary = PlistDictionary(minimumCapacity: distinct)
        let values = refs + count * layout.refSize
        for i in 0 ..< count {
            let number = pendingKeys[base + i]
            if depth == 0, let only = onlyTopLevelKeys, number < 0 || !only.contains(keyTexts[Int(number)]) { continue }
            let value = try decodeObject(readRef(at: values + i * layout.refSize), depth: depth + 1)
            if number >= 0 {
                try expand(by: keySizes[Int(number)], at: offset)
                dictionary.append(keyTexts[Int(number)], value)
            }
        }
        pendingKeys.removeSubrange(base...)
        return finish(index, .dictionary(dictionary), expandedBefore: expandedBefore)
    }

    /// The number of the key text of object `index`, which must be a string (CoreFoundation
    /// accepts other scalars, which no property list can hold, and refuses containers).
    ///
    /// Each key object is looked up once, by the UTF-8 bytes of its text. For an ASCII key
    /// (nearly all) those are the bytes in the file: writers that store every key anew
    /// (Foundation on Linux) then cost one hash per key and no `String`.
    private mutating func keyNumber(_ index: Int) throws(PlistError) -> Int32 {
        let entry = entries[index]
        if entry.key >= 0 { return entry.key }
        let offset = try objectStart(entry.offset, index)
        let kind = bytes[offset] >> 4
        guard kind == 0x5 || kind == 0x6 else {
            throw PlistError(.invalidKey, "dictionary key is not a string (marker 0x\(String(bytes[offset], radix: 16, uppercase: true)))", at: .offset(offset))
        }
        let payload = try stringPayload(at: offset)
        let number: Int32
        if kind == 0x5 && BinaryPlistText.isASCII(payload) {
            number = keyTable.number(for: .file(payload))
        } else {
            number = keyTable.number(for: .text(kind == 0x5 ? BinaryPlistText.ascii(payload) : try BinaryPlistText.utf16BigEndian(payload, at: offset)))
        }
        if Int(number) == keyTexts.count {
            keyTexts.append(keyTable.text(number))
            keySizes.append(Self.expandedSize(payload: keyTexts[Int(number)].utf8.count))
            keyLastSeen.append(0)
        }
        entries[index].key = number
        return number
    }

    private func checkDepth(_ depth: Int, at offset: Int) throws(PlistError) {
        guard depth < maximumDepth else {
            throw PlistError(.tooDeep, "containers nested deeper than \(maximumDepth)", at: .offset(offset))
        }
    }

    /// The object referred to at `position` (mapped by `identity`), checked against the count.
    @inline(__always)
    private func readRef(at position: Int) throws(PlistError) -> Int {
        let ref: UInt64
        switch layout.refSize {
        case 1: ref = UInt64(bytes[position])
        case 2: ref = UInt64(bytes.loadBigEndian16(at: position))
        default: ref = bytes.loadBigEndian(at: position, size: layout.refSize)
        }
        guard ref < UInt64(layout.objectCount) else {
            throw PlistError(.corruptBinary, "object reference \(ref) is not below the object count \(layout.objectCount)", at: .offset(position))
        }
        return identity(Int(ref))
    }

    // MARK: Lengths

    /// The element count in a marker's low nibble, or the integer object that follows when the
    /// nibble is 0xF; returns it with the offset of the payload.
    private func readCount(at offset: Int) throws(PlistError) -> (count: Int, payload: Int) {
        let nibble = Int(bytes[offset] & 0x0F)
        guard nibble == 0x0F else { return (nibble, offset + 1) }
        let intOffset = offset + 1
        guard intOffset < limit else { throw truncated("length", at: offset) }
        guard bytes[intOffset] >> 4 == 0x1 else {
            throw PlistError(.corruptBinary, "length is not followed by an integer object", at: .offset(intOffset))
        }
        let value = try readInteger(at: intOffset)
        guard !value.isNegative, value.bits <= UInt64(Int.max) else {
            throw PlistError(.corruptBinary, "length \(value) is out of range", at: .offset(intOffset))
        }
        let width = 1 << Int(bytes[intOffset] & 0x0F)
        return (Int(value.bits), intOffset + 1 + width)
    }

    /// Checks that `count` bytes starting at `start` lie in the object area.
    @inline(__always)
    private func checkBytes(_ count: Int, from start: Int, what: @autoclosure () -> String, at offset: Int) throws(PlistError) {
        guard start <= limit, count <= limit - start else { throw truncated(what(), at: offset) }
    }

    private func truncated(_ what: String, at offset: Int) -> PlistError {
        PlistError(.unexpectedEnd, "\(what) runs past the object area (ends at \(limit))", at: .offset(offset))
    }

    // MARK: Scalars

    /// 1, 2 and 4-byte integers are unsigned, 8-byte signed, 16-byte unsigned with only the low
    /// 64 bits significant (CoreFoundation's reading).
    private func readInteger(at offset: Int) throws(PlistError) -> PlistInteger {
        let exponent = bytes[offset] & 0x0F
        guard exponent <= 4 else {
            throw PlistError(.corruptBinary, "integer of 2^\(exponent) bytes is not supported", at: .offset(offset))
        }
        let width = 1 << Int(exponent)
        try checkBytes(width, from: offset + 1, what: "integer", at: offset)
        switch width {
        case 1: return PlistInteger(UInt64(bytes[offset + 1]))
        case 2: return PlistInteger(UInt64(bytes.loadBigEndian16(at: offset + 1)))
        case 4: return PlistInteger(bytes.loadBigEndian(at: offset + 1, size: 4))
        case 8: return PlistInteger(Int64(bitPattern: bytes.loadBigEndian(at: offset + 1, size: 8)))
        default: return PlistInteger(bytes.loadBigEndian(at: offset + 9, size: 8))
        }
    }

    private func readReal(at offset: Int) throws(PlistError) -> Double {
        switch bytes[offset] {
        case 0x22:
            try checkBytes(4, from: offset + 1, what: "real", at: offset)
            return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bytes.loadBigEndian(at: offset + 1, size: 4))))
        case 0x23:
            try checkBytes(8, from: offset + 1, what: "real", at: offset)
            return Double(bitPattern: bytes.loadBigEndian(at: offset + 1, size: 8))
        default:
            throw PlistError(.corruptBinary, "real of marker 0x\(String(bytes[offset], radix: 16, uppercase: true)) is not 4 or 8 bytes", at: .offset(offset))
        }
    }

    private func readDate(at offset: Int) throws(PlistError) -> Double {
        guard bytes[offset] == 0x33 else {
            throw PlistError(.corruptBinary, "date must be an 8-byte double (marker 0x33)", at: .offset(offset))
        }
        try checkBytes(8, from: offset + 1, what: "date", at: offset)
        return Double(bitPattern: bytes.loadBigEndian(at: offset + 1, size: 8))
    }

    /// UIDs are at most 32 bits, as CoreFoundation requires; wider encodings are accepted while
    /// their value fits.
    private func readUID(at offset: Int) throws(PlistError) -> UInt64 {
        let width = Int(bytes[offset] & 0x0F) + 1
        try checkBytes(width, from: offset + 1, what: "UID", at: offset)
        var value: UInt64 = 0
        for i in 0 ..< width {
            guard value <= 0xFF_FFFF else {
                throw PlistError(.corruptBinary, "UID wider than 32 bits", at: .offset(offset))
            }
            value = value << 8 | UInt64(bytes[offset + 1 + i])
        }
        return value
    }

    private func readData(at offset: Int) throws(PlistError) -> Data {
        let (count, start) = try readCount(at: offset)
        try checkBytes(count, from: start, what: "data of \(count) bytes", at: offset)
        if let skip = skippingDataLongerThan, count > skip { return Data() }
        return Data(buffer: UnsafeBufferPointer(rebasing: bytes[start ..< start + count]))
    }

    /// The bytes of an ASCII (`0x5_`) or UTF-16 (`0x6_`) string object, checked to be in bounds.
    private func stringPayload(at offset: Int) throws(PlistError) -> UnsafeBufferPointer<UInt8> {
        let (count, start) = try readCount(at: offset)
        let unitSize = bytes[offset] >> 4 == 0x5 ? 1 : 2
        guard count <= (limit - start) / unitSize else {
            throw truncated("string of \(count) \(unitSize == 1 ? "bytes" : "UTF-16 units")", at: offset)
        }
        return UnsafeBufferPointer(rebasing: bytes[start ..< start + unitSize * count])
    }
}
