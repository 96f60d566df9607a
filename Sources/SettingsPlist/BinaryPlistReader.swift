#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads binary property lists (`bplist00`), with CoreFoundation's validation rules.
///
/// The file is validated from the outside in: header, then the 32-byte trailer against the file
/// size, then every entry of the offset table, all before anything is allocated in proportion to
/// the counts the file claims. Objects are then decoded on demand from the top object down; every
/// length and count is checked against the bytes that remain before it is used.
enum BinaryPlistReader {
    static func read(_ buffer: UnsafeBufferPointer<UInt8>, options: PlistReadOptions) throws(PlistError) -> PlistValue {
        let layout = try BinaryPlistLayout(buffer)
        var decoder = BinaryPlistDecoder(buffer, layout: layout, maximumDepth: options.maximumDepth)
        return try decoder.decodeTop()
    }
}

// MARK: - Layout: header, trailer, offset table

/// The validated frame of a binary plist: trailer fields and the decoded offset table.
struct BinaryPlistLayout {
    /// Size of the header (`bplist0?`); no object may start inside it.
    static let headerSize = 8
    /// Size of the trailer at the end of the file.
    static let trailerSize = 32

    /// Bytes per object reference inside arrays and dictionaries (1...255).
    let refSize: Int
    /// The number of objects (entries in the offset table).
    let objectCount: Int
    /// The index of the root object.
    let topObject: Int
    /// Where the offset table starts; objects end before it.
    let tableOffset: Int
    /// The byte offset of each object, each already checked to be `< tableOffset`.
    let offsets: [UInt32]
    /// For each object, the first object at the same offset, when some offsets repeat (empty
    /// otherwise). CoreFoundation identifies objects by offset; so must we, or a file naming one
    /// big array under many indices would decode it once per index.
    let canonical: [Int]

    init(_ bytes: UnsafeBufferPointer<UInt8>) throws(PlistError) {
        try Self.checkHeader(bytes)
        // Header, at least one object byte, trailer: CoreFoundation's minimum.
        guard bytes.count >= Self.headerSize + 1 + Self.trailerSize else {
            throw PlistError(.unexpectedEnd, "binary plist too short for a header and trailer (\(bytes.count) bytes)", at: .offset(bytes.count))
        }
        let t = bytes.count - Self.trailerSize
        let offsetSize = Int(bytes[t + 6])
        let refSize = Int(bytes[t + 7])
        let count = bytes.loadBigEndian(at: t + 8, size: 8)
        let top = bytes.loadBigEndian(at: t + 16, size: 8)
        let table = bytes.loadBigEndian(at: t + 24, size: 8)

        // CoreFoundation takes any non-zero size; above 8 bytes only the low 64 bits count.
        guard offsetSize >= 1 else {
            throw PlistError(.corruptBinary, "trailer: offset size is 0", at: .offset(t + 6))
        }
        guard refSize >= 1 else {
            throw PlistError(.corruptBinary, "trailer: object reference size is 0", at: .offset(t + 7))
        }
        guard count >= 1 else {
            throw PlistError(.corruptBinary, "trailer: no objects", at: .offset(t + 8))
        }
        // A count above the file size cannot fit; checking it first keeps the products below exact.
        guard count <= UInt64(bytes.count) else {
            throw PlistError(.corruptBinary, "trailer: object count \(count) exceeds the file size", at: .offset(t + 8))
        }
        guard top < count else {
            throw PlistError(.corruptBinary, "trailer: top object \(top) is not below the object count \(count)", at: .offset(t + 16))
        }
        let tableSize = count * UInt64(offsetSize)
        guard table >= UInt64(Self.headerSize + 1), table <= UInt64(bytes.count),
              table + tableSize + UInt64(Self.trailerSize) == UInt64(bytes.count)
        else {
            throw PlistError(.corruptBinary, "trailer: offset table at \(table) with \(count) entries of \(offsetSize) bytes does not end where the trailer starts (\(t))", at: .offset(t + 24))
        }
        // References must be able to name every object, offsets must reach the table (CF's checks).
        guard refSize >= 8 || count < UInt64(1) << (8 * refSize) else {
            throw PlistError(.corruptBinary, "trailer: \(refSize)-byte references cannot address \(count) objects", at: .offset(t + 7))
        }
        guard offsetSize >= 8 || table < UInt64(1) << (8 * offsetSize) else {
            throw PlistError(.corruptBinary, "trailer: \(offsetSize)-byte offsets cannot reach the offset table at \(table)", at: .offset(t + 6))
        }
        // Offsets are kept in 32 bits: 4 GiB of objects is far beyond any property list.
        guard table <= UInt64(UInt32.max) else {
            throw PlistError(.corruptBinary, "binary plist larger than 4 GiB", at: .offset(t + 24))
        }
        self.refSize = refSize
        self.objectCount = Int(count)
        self.topObject = Int(top)
        self.tableOffset = Int(table)
        self.offsets = try Self.readOffsets(bytes, table: Int(table), count: Int(count), size: offsetSize)
        self.canonical = Self.aliases(offsets, table: Int(table))
    }

    /// Accepts `bplist0` followed by any character, as CoreFoundation does since 10.6.
    private static func checkHeader(_ bytes: UnsafeBufferPointer<UInt8>) throws(PlistError) {
        let magic: [UInt8] = Array("bplist0".utf8)
        for (i, expected) in magic.enumerated() where i >= bytes.count || bytes[i] != expected {
            if i >= bytes.count {
                throw PlistError(.unexpectedEnd, "binary plist header cut short", at: .offset(bytes.count))
            }
            throw PlistError(.unknownFormat, "not a bplist0x header (only version 0x is supported)", at: .offset(i))
        }
    }

    /// Decodes the offset table, checking each entry lies before the table (CF checks the same;
    /// the lower bound, 8, is checked when an object is actually used, as CF does).
    private static func readOffsets(_ bytes: UnsafeBufferPointer<UInt8>, table: Int, count: Int, size: Int) throws(PlistError) -> [UInt32] {
        var offsets = [UInt32](repeating: 0, count: count)
        var position = table
        for i in 0..<count {
            let offset = bytes.loadBigEndian(at: position, size: size)
            guard offset < UInt64(table) else {
                throw PlistError(.corruptBinary, "offset table: object \(i) at \(offset) is not before the offset table (\(table))", at: .offset(position))
            }
            offsets[i] = UInt32(offset)
            position += size
        }
        return offsets
    }

    /// Maps each object to the first object at its offset, or returns `[]` when all offsets are
    /// distinct (the normal case, found with one bit per byte of the object area).
    private static func aliases(_ offsets: [UInt32], table: Int) -> [Int] {
        var seen = [UInt64](repeating: 0, count: table / 64 + 1)
        var repeated = false
        for offset in offsets.lazy.map(Int.init) {
            let (word, bit) = (offset >> 6, UInt64(1) << UInt64(offset & 63))
            if seen[word] & bit != 0 {
                repeated = true
                break
            }
            seen[word] |= bit
        }
        guard repeated else { return [] }
        var first = [UInt32: Int](minimumCapacity: offsets.count)
        return offsets.indices.map { i in
            if let j = first[offsets[i]] { return j }
            first[offsets[i]] = i
            return i
        }
    }
}

// MARK: - Object decoding

/// Decodes objects from the top object down, sharing what the file shares and detecting cycles.
///
/// A pre-pass counts the references to every object. Objects referenced more than once (keys
/// repeated in every dictionary, a DAG of containers) are decoded once and then reused, so the
/// time stays linear in the file size; objects referenced once are never cached. A container is
/// marked in progress while its children decode: meeting it again on the way down is a cycle.
/// Dictionary keys go through a table that gives each distinct key text a small number, so
/// duplicate keys are found without comparing strings.
struct BinaryPlistDecoder {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let layout: BinaryPlistLayout
    private let maximumDepth: Int
    /// Objects end before this offset (the start of the offset table).
    private let limit: Int

    /// Everything known per object, in one array: following a reference then costs one cache
    /// miss rather than one per property.
    private var entries: [Entry]
    /// Decoded objects referenced more than once.
    private var cache: [PlistValue] = []
    private var keyTable = KeyTextTable()
    private var keyTexts: [String] = []
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

    init(_ bytes: UnsafeBufferPointer<UInt8>, layout: BinaryPlistLayout, maximumDepth: Int) {
        self.bytes = bytes
        self.layout = layout
        self.maximumDepth = maximumDepth
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

    /// Keeps `value` for later references when more than one reference points to it.
    @inline(__always)
    private mutating func finish(_ index: Int, _ value: PlistValue) -> PlistValue {
        if entries[index].isShared {
            entries[index].state = Entry.cached + UInt32(truncatingIfNeeded: cache.count)
            cache.append(value)
        } else {
            entries[index].state &= ~Entry.inProgress
        }
        return value
    }

    // MARK: Objects

    /// Decodes object `index` (already mapped by `identity`), nested inside `depth` containers.
    private mutating func decodeObject(_ index: Int, depth: Int) throws(PlistError) -> PlistValue {
        let entry = entries[index]
        if entry.state >= Entry.cached { return cache[Int(entry.state - Entry.cached)] }
        if entry.state & Entry.inProgress != 0 {
            throw PlistError(.cycle, "object \(index) contains itself", at: .offset(Int(entry.offset)))
        }
        let offset = try objectStart(entry.offset, index)
        let marker = bytes[offset]
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
        case 0x4: return finish(index, .data(try readData(at: offset)))
        case 0x5, 0x6: return finish(index, .string(try readString(at: offset)))
        case 0x8: return .uid(try readUID(at: offset))
        case 0xA: return try decodeArray(index, at: offset, depth: depth)
        case 0xD: return try decodeDictionary(index, at: offset, depth: depth)
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

    private mutating func decodeArray(_ index: Int, at offset: Int, depth: Int) throws(PlistError) -> PlistValue {
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
        return finish(index, .array(elements))
    }

    /// Keys first, as CoreFoundation reads them: each must be a string; a key seen before in
    /// this dictionary keeps its first value (CF adds only absent keys). Values of duplicates
    /// are still decoded, so an error in them is reported as CF reports it.
    private mutating func decodeDictionary(_ index: Int, at offset: Int, depth: Int) throws(PlistError) -> PlistValue {
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
            let value = try decodeObject(readRef(at: values + i * layout.refSize), depth: depth + 1)
            let number = pendingKeys[base + i]
            if number >= 0 { dictionary.append(keyTexts[Int(number)], value) }
        }
        pendingKeys.removeSubrange(base...)
        return finish(index, .dictionary(dictionary))
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
            number = keyTable.number(for: .text(kind == 0x5 ? BinaryPlistText.ascii(payload) : BinaryPlistText.utf16BigEndian(payload)))
        }
        if Int(number) == keyTexts.count {
            keyTexts.append(keyTable.text(number))
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
        return Data(buffer: UnsafeBufferPointer(rebasing: bytes[start ..< start + count]))
    }

    private func readString(at offset: Int) throws(PlistError) -> String {
        let payload = try stringPayload(at: offset)
        return bytes[offset] >> 4 == 0x5 ? BinaryPlistText.ascii(payload) : BinaryPlistText.utf16BigEndian(payload)
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

/// Numbers distinct key texts 0, 1, 2... by their UTF-8 bytes (that is, by code points).
private struct KeyTextTable {
    /// A key's UTF-8 bytes: still in the file for ASCII keys, else in a `String`.
    enum Bytes {
        case file(UnsafeBufferPointer<UInt8>)
        case text(String)

        func with<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            switch self {
            case .file(let bytes): return body(bytes)
            case .text(var text): return text.withUTF8(body)
            }
        }
    }

    private var slots = BinaryPlistHashSlots()
    /// Per number: the key's bytes.
    private var keys: [Bytes] = []

    /// The number of `key`'s text: an existing one, or the next number when the text is new.
    mutating func number(for key: Bytes) -> Int32 {
        let next = keys.count
        let number = key.with { bytes in
            slots.findOrInsert(hash: BinaryPlistHashSlots.hash(bytes), next) { candidate in
                keys[candidate].with { BinaryPlistText.equal(bytes, $0) }
            }
        }
        if number == next { keys.append(key) }
        return Int32(truncatingIfNeeded: number)
    }

    /// The text of key `number`, as a `String`.
    func text(_ number: Int32) -> String {
        switch keys[Int(number)] {
        case .file(let bytes): String(decoding: bytes, as: UTF8.self)
        case .text(let text): text
        }
    }
}

/// An open-addressing table from 64-bit hashes to numbers; callers say which entries match.
///
/// Much cheaper per lookup than `Dictionary` with `Hasher`, which matters when every string
/// and container of a file goes through it. The hash is a multiply-xorshift mix seeded from
/// `Hasher`'s per-process random seed, so colliding inputs cannot be prepared offline.
struct BinaryPlistHashSlots {
    /// Per slot: a hash with the low bit set (0 = empty), and its number.
    private var hashes = [UInt64](repeating: 0, count: 64)
    private var numbers = [Int](repeating: 0, count: 64)
    private var count = 0

    static let seed: UInt64 = {
        var hasher = Hasher()
        hasher.combine(0x6B65_7973 as UInt64)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }()

    /// The number of the entry matching `isMatch` among those with `hash`; else records `next`
    /// under `hash` and returns it.
    @inline(__always)
    mutating func findOrInsert(hash: UInt64, _ next: Int, isMatch: (Int) -> Bool) -> Int {
        let hash = hash | 1
        let mask = hashes.count - 1
        var slot = Int(truncatingIfNeeded: hash >> 1) & mask
        while hashes[slot] != 0 {
            if hashes[slot] == hash && isMatch(numbers[slot]) { return numbers[slot] }
            slot = (slot + 1) & mask
        }
        hashes[slot] = hash
        numbers[slot] = next
        count += 1
        if count * 2 > hashes.count { grow() }
        return next
    }

    /// The number of the entry matching `isMatch` among those with `hash`, or `nil`.
    @inline(__always)
    func find(hash: UInt64, isMatch: (Int) -> Bool) -> Int? {
        let hash = hash | 1
        let mask = hashes.count - 1
        var slot = Int(truncatingIfNeeded: hash >> 1) & mask
        while hashes[slot] != 0 {
            if hashes[slot] == hash && isMatch(numbers[slot]) { return numbers[slot] }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Records `number` under `hash`; the caller knows no entry matches.
    mutating func insert(hash: UInt64, _ number: Int) {
        let hash = hash | 1
        let mask = hashes.count - 1
        var slot = Int(truncatingIfNeeded: hash >> 1) & mask
        while hashes[slot] != 0 { slot = (slot + 1) & mask }
        hashes[slot] = hash
        numbers[slot] = number
        count += 1
        if count * 2 > hashes.count { grow() }
    }

    /// Doubles the table. Works on buffers: array subscripts on `self` would check uniqueness
    /// on every store, which made growing cost more than all the lookups.
    private mutating func grow() {
        let size = hashes.count * 2
        let mask = size - 1
        var newHashes = [UInt64](repeating: 0, count: size)
        var newNumbers = [Int](repeating: 0, count: size)
        hashes.withUnsafeBufferPointer { oldHashes in
            numbers.withUnsafeBufferPointer { oldNumbers in
                newHashes.withUnsafeMutableBufferPointer { hashes in
                    newNumbers.withUnsafeMutableBufferPointer { numbers in
                        for i in oldHashes.indices where oldHashes[i] != 0 {
                            var slot = Int(truncatingIfNeeded: oldHashes[i] >> 1) & mask
                            while hashes[slot] != 0 { slot = (slot + 1) & mask }
                            hashes[slot] = oldHashes[i]
                            numbers[slot] = oldNumbers[i]
                        }
                    }
                }
            }
        }
        hashes = newHashes
        numbers = newNumbers
    }

    /// Mixes one 64-bit word into a running hash.
    @inline(__always)
    static func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
        let m = (h ^ word) &* 0xBF58_476D_1CE4_E5B9
        return m ^ (m >> 31)
    }

    /// Finishes a running hash.
    @inline(__always)
    static func finish(_ h: UInt64) -> UInt64 {
        let m = (h ^ (h >> 29)) &* 0x94D0_49BB_1331_11EB
        return m ^ (m >> 32)
    }

    /// The hash of a byte string.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= bytes.count {
                h = mix(h, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                i += 8
            }
        }
        var tail: UInt64 = 0
        while i < bytes.count {
            tail = tail << 8 | UInt64(bytes[i])
            i += 1
        }
        return finish(mix(h, tail))
    }
}

// MARK: - Text

/// Builds `String`s from the two binary string encodings in one pass each.
enum BinaryPlistText {
    /// An ASCII (`0x5_`) string. Bytes >= 0x80 are read as Latin-1, as CoreFoundation on Linux
    /// does: every byte keeps a meaning and nothing is lost (swift-foundation refuses them instead).
    static func ascii(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        var extra = 0
        for b in bytes where b >= 0x80 { extra += 1 }
        return String(unsafeUninitializedCapacity: bytes.count + extra) { out in
            var n = 0
            for b in bytes {
                if b < 0x80 {
                    out[n] = b
                    n += 1
                } else {
                    out[n] = 0xC0 | b >> 6
                    out[n + 1] = 0x80 | b & 0x3F
                    n += 2
                }
            }
            return n
        }
    }

    /// Whether two byte ranges hold the same bytes, eight at a time.
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        if pa == pb { return true }
        let (ra, rb) = (UnsafeRawPointer(pa), UnsafeRawPointer(pb))
        var i = 0
        while i + 8 <= a.count {
            if ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) != rb.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i += 8
        }
        while i < a.count {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }

    /// Whether every byte is below 0x80, eight bytes at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var i = 0
        var acc: UInt64 = 0
        while i + 8 <= bytes.count {
            acc |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            acc |= UInt64(bytes[i])
            i += 1
        }
        return acc & 0x8080_8080_8080_8080 == 0
    }

    /// A UTF-16 big-endian (`0x6_`) string; a lone surrogate becomes U+FFFD, since a Swift
    /// `String` cannot hold it.
    static func utf16BigEndian(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let units = bytes.count / 2
        return String(unsafeUninitializedCapacity: units * 3) { out in
            var n = 0
            var i = 0
            while i < units {
                let u = UInt32(bytes[2 * i]) << 8 | UInt32(bytes[2 * i + 1])
                i += 1
                var scalar = u
                if u & 0xF800 == 0xD800 {
                    scalar = 0xFFFD
                    if u < 0xDC00, i < units {
                        let low = UInt32(bytes[2 * i]) << 8 | UInt32(bytes[2 * i + 1])
                        if low & 0xFC00 == 0xDC00 {
                            scalar = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)
                            i += 1
                        }
                    }
                }
                n += encodeUTF8(scalar, into: out, at: n)
            }
            return n
        }
    }

    /// Writes `scalar` as UTF-8 at `out[n...]`, returning the byte count.
    @inline(__always)
    private static func encodeUTF8(_ scalar: UInt32, into out: UnsafeMutableBufferPointer<UInt8>, at n: Int) -> Int {
        switch scalar {
        case 0..<0x80:
            out[n] = UInt8(scalar)
            return 1
        case 0x80..<0x800:
            out[n] = UInt8(0xC0 | scalar >> 6)
            out[n + 1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case 0x800..<0x10000:
            out[n] = UInt8(0xE0 | scalar >> 12)
            out[n + 1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[n + 2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            out[n] = UInt8(0xF0 | scalar >> 18)
            out[n + 1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            out[n + 2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[n + 3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }
}

// MARK: - Big-endian loads

extension UnsafeBufferPointer<UInt8> {
    /// The big-endian unsigned integer of `size` bytes at `offset` (above 8 bytes, its low 64
    /// bits, as CoreFoundation reads them); the caller has checked the bytes are in bounds.
    @inline(__always)
    func loadBigEndian(at offset: Int, size: Int) -> UInt64 {
        let raw = UnsafeRawPointer(baseAddress.unsafelyUnwrapped + offset)
        switch size {
        case 8: return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
        case 4: return UInt64(UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)))
        case 2: return UInt64(UInt16(bigEndian: raw.loadUnaligned(as: UInt16.self)))
        case 1: return UInt64(raw.load(as: UInt8.self))
        default:
            var value: UInt64 = 0
            for i in 0..<size { value = value << 8 | UInt64(self[offset + i]) }
            return value
        }
    }

    @inline(__always)
    func loadBigEndian16(at offset: Int) -> UInt16 {
        UInt16(bigEndian: UnsafeRawPointer(baseAddress.unsafelyUnwrapped + offset).loadUnaligned(as: UInt16.self))
    }
}
