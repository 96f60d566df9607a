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

    /// Bytes per object reference inside arrays and dictionaries (1...8).
    let refSize: Int
    /// The number of objects (entries in the offset table).
    let objectCount: Int
    /// The index of the root object.
    let topObject: Int
    /// Where the offset table starts; objects end before it.
    let tableOffset: Int
    /// The byte offset of each object, each already checked to be `< tableOffset`.
    let offsets: [Int]

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

        guard (1...8).contains(offsetSize) else {
            throw PlistError(.corruptBinary, "trailer: offset size \(offsetSize) is not 1...8", at: .offset(t + 6))
        }
        guard (1...8).contains(refSize) else {
            throw PlistError(.corruptBinary, "trailer: object reference size \(refSize) is not 1...8", at: .offset(t + 7))
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
        self.refSize = refSize
        self.objectCount = Int(count)
        self.topObject = Int(top)
        self.tableOffset = Int(table)
        self.offsets = try Self.readOffsets(bytes, table: Int(table), count: Int(count), size: offsetSize)
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
    private static func readOffsets(_ bytes: UnsafeBufferPointer<UInt8>, table: Int, count: Int, size: Int) throws(PlistError) -> [Int] {
        var offsets = [Int](repeating: 0, count: count)
        var position = table
        for i in 0..<count {
            let offset = bytes.loadBigEndian(at: position, size: size)
            guard offset < UInt64(table) else {
                throw PlistError(.corruptBinary, "offset table: object \(i) at \(offset) is not before the offset table (\(table))", at: .offset(position))
            }
            offsets[i] = Int(offset)
            position += size
        }
        return offsets
    }
}

// MARK: - Object decoding

/// Decodes objects by index, memoising what is worth sharing and detecting cycles.
///
/// Strings, data and finished containers are cached by object index, so a file whose objects are
/// shared (keys repeated in every dictionary, a DAG of containers) decodes in time linear in its
/// size. A container is marked in progress while its children decode: meeting it again on the
/// way down is a cycle.
struct BinaryPlistDecoder {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let layout: BinaryPlistLayout
    private let maximumDepth: Int
    /// Objects end before this offset (the start of the offset table).
    private let limit: Int
    /// Per object: `fresh`, `inProgress` (a container on the current path) or `cached`.
    private var state: [ObjectState]
    /// Decoded objects, valid where `state` is `cached`.
    private var cache: [PlistValue]

    private enum ObjectState: UInt8 {
        case fresh, inProgress, cached
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>, layout: BinaryPlistLayout, maximumDepth: Int) {
        self.bytes = bytes
        self.layout = layout
        self.maximumDepth = maximumDepth
        self.limit = layout.tableOffset
        self.state = [ObjectState](repeating: .fresh, count: layout.objectCount)
        self.cache = [PlistValue](repeating: .bool(false), count: layout.objectCount)
    }

    mutating func decodeTop() throws(PlistError) -> PlistValue {
        try decodeObject(layout.topObject, depth: 0)
    }

    /// Decodes object `index`, nested inside `depth` containers.
    private mutating func decodeObject(_ index: Int, depth: Int) throws(PlistError) -> PlistValue {
        switch state[index] {
        case .cached: return cache[index]
        case .inProgress:
            throw PlistError(.cycle, "object \(index) contains itself", at: .offset(layout.offsets[index]))
        case .fresh: break
        }
        let offset = try objectStart(index)
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
        case 0x4: return remember(index, .data(try readData(at: offset)))
        case 0x5, 0x6: return remember(index, .string(try readString(at: offset)))
        case 0x8: return .uid(try readUID(at: offset))
        case 0xA: return try decodeArray(index, at: offset, depth: depth)
        case 0xD: return try decodeDictionary(index, at: offset, depth: depth)
        default: throw unknownMarker(marker, at: offset)
        }
    }

    private mutating func remember(_ index: Int, _ value: PlistValue) -> PlistValue {
        cache[index] = value
        state[index] = .cached
        return value
    }

    /// The offset of object `index`, checked to lie in the object area.
    private func objectStart(_ index: Int) throws(PlistError) -> Int {
        let offset = layout.offsets[index]
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
        try checkRefs(count, from: refs, at: offset)
        state[index] = .inProgress
        var elements = [PlistValue]()
        elements.reserveCapacity(count)
        var position = refs
        for _ in 0..<count {
            let child = try readRef(at: position)
            elements.append(try decodeObject(child, depth: depth + 1))
            position += layout.refSize
        }
        return remember(index, .array(elements))
    }

    private mutating func decodeDictionary(_ index: Int, at offset: Int, depth: Int) throws(PlistError) -> PlistValue {
        try checkDepth(depth, at: offset)
        let (count, refs) = try readCount(at: offset)
        // `count` key refs then `count` value refs; halving the room first cannot overflow.
        guard count <= (limit - refs) / layout.refSize / 2 else {
            throw truncated("dictionary of \(count) entries", at: offset)
        }
        state[index] = .inProgress
        var dictionary = PlistDictionary(minimumCapacity: count)
        let valueRefs = refs + count * layout.refSize
        for i in 0..<count {
            let key = try decodeKey(readRef(at: refs + i * layout.refSize))
            // Values of duplicate keys are still decoded, so errors in them are reported as CF does.
            let value = try decodeObject(readRef(at: valueRefs + i * layout.refSize), depth: depth + 1)
            _ = dictionary.insertFromReader(key, value, keepFirst: true)
        }
        return remember(index, .dictionary(dictionary))
    }

    /// A dictionary key: must be a string object (CF would accept other scalars, which no
    /// property list can hold, and refuses containers).
    private mutating func decodeKey(_ index: Int) throws(PlistError) -> String {
        if state[index] == .cached, case .string(let s) = cache[index] { return s }
        let offset = try objectStart(index)
        let kind = bytes[offset] >> 4
        guard kind == 0x5 || kind == 0x6 else {
            throw PlistError(.invalidKey, "dictionary key is not a string (marker 0x\(String(bytes[offset], radix: 16, uppercase: true)))", at: .offset(offset))
        }
        let key = try readString(at: offset)
        _ = remember(index, .string(key))
        return key
    }

    private func checkDepth(_ depth: Int, at offset: Int) throws(PlistError) {
        guard depth < maximumDepth else {
            throw PlistError(.tooDeep, "containers nested deeper than \(maximumDepth)", at: .offset(offset))
        }
    }

    private func checkRefs(_ count: Int, from refs: Int, at offset: Int) throws(PlistError) {
        guard count <= (limit - refs) / layout.refSize else {
            throw truncated("array of \(count) elements", at: offset)
        }
    }

    /// The object index stored at `position`, checked against the object count.
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
        return Int(ref)
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
    private func checkBytes(_ count: Int, from start: Int, what: String, at offset: Int) throws(PlistError) {
        guard start <= limit, count <= limit - start else { throw truncated(what, at: offset) }
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
        for i in 0..<width {
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
        let (count, start) = try readCount(at: offset)
        if bytes[offset] >> 4 == 0x5 {
            try checkBytes(count, from: start, what: "string of \(count) bytes", at: offset)
            return BinaryPlistText.ascii(UnsafeBufferPointer(rebasing: bytes[start ..< start + count]))
        }
        guard count <= (limit - min(start, limit)) / 2 else {
            throw truncated("string of \(count) UTF-16 units", at: offset)
        }
        return BinaryPlistText.utf16BigEndian(UnsafeBufferPointer(rebasing: bytes[start ..< start + 2 * count]))
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
    /// The big-endian unsigned integer of `size` (1...8) bytes at `offset`; the caller has
    /// checked the bytes are in bounds.
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
