// The frame of a binary plist: header, trailer and offset table, validated before any object is read.

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
