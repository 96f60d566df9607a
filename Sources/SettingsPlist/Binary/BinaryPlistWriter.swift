#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes binary property lists (`bplist00`) that CoreFoundation, plistlib and libplist read.
///
/// Equal values are written once: strings, numbers, dates, data, UIDs and also equal containers
/// (two arrays or dictionaries whose children are the same objects). Equality is the exact
/// ``PlistValue`` equality, so `1`, `1.0` and `true` stay three objects, and so do `0.0` and `-0.0`.
/// Integers and references use the smallest width CoreFoundation would; reals are always 8-byte
/// doubles (a `Double` is a 64-bit CFNumber, which CF writes as 8 bytes).
///
/// Every file written here reads back: the reader refuses a file whose value, counted once per
/// reference, exceeds ``BinaryPlistDecoder/expansionLimit(forFileSize:)``, so a value that
/// sharing would shrink that far (`Array(repeating: big, count: 100_000)`, cheap in memory
/// because arrays share storage) is written again with every string, data and container in full.
enum BinaryPlistWriter {
    static func write(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        try write(value, expansionLimit: BinaryPlistDecoder.expansionLimit(forFileSize:))
    }

    /// Writes `value`, without sharing when the shared file would exceed `expansionLimit`.
    static func write(_ value: PlistValue, expansionLimit: (Int) -> Int) throws(PlistError) -> [UInt8] {
        var flattener = BinaryPlistFlattener(sharing: true)
        _ = try flattener.add(value, depth: 0)
        let shared = flattener.finish()
        guard flattener.expandedSize > expansionLimit(shared.count) else { return shared }
        // Unshared, each value takes at least 3 bytes of file for its 8 of expanded size.
        var plain = BinaryPlistFlattener(sharing: false)
        _ = try plain.add(value, depth: 0)
        return plain.finish()
    }
}

/// Numbers the objects of a value tree children-first, writing scalars as soon as they are met
/// and containers once every object number, hence the reference width, is known.
///
/// Objects are numbered in post-order (a container after its children, so equal containers can
/// be recognised by their children's numbers); the file numbers them in reverse, so the top
/// object is object 0 as in CoreFoundation's files.
struct BinaryPlistFlattener {
    /// The file so far: the header, then each scalar object as it is first met.
    private var out: [UInt8] = Array("bplist00".utf8)
    /// The byte offset of every object, by post-order number (containers filled in by ``finish()``).
    private var offsets: [Int] = []
    /// Containers in post-order, with their children in ``refs`` (object numbers as 32 bits, as
    /// in ``BinaryPlistHashSlots``: half the memory of the largest table).
    private var containers: [Container] = []
    /// Children (post-order numbers) of all containers, each container's run contiguous.
    private var refs: [Int32] = []
    /// Children of the containers being flattened, innermost last.
    private var pending: [Int32] = []

    /// Strings met so far (by code points, through `stringSlots`) and their object numbers.
    private var strings: [String] = []
    private var stringObjects: [Int] = []
    private var stringSlots = BinaryPlistHashSlots()
    /// The representation bits of each string in `strings`, found through `stringBitSlots`: equal
    /// bits mean equal text (an inline small string, or the same storage, which `strings` keeps
    /// alive), so a key met again costs two words' hash instead of a hash of its bytes.
    private var stringBits: [RawStringBits] = []
    private var stringBitSlots = BinaryPlistHashSlots()
    /// Integers, reals, dates and UIDs met so far, as (kind, 64 bits), and their object numbers.
    /// Reals and dates go by bit pattern: `-0.0` and `0.0` stay apart, each NaN payload is kept.
    private var scalars: [(kind: ScalarKind, bits: UInt64)] = []
    private var scalarObjects: [Int] = []
    private var scalarSlots = BinaryPlistHashSlots()
    /// Data blobs met so far (by bytes, through `dataSlots`) and their object numbers: the
    /// seeded byte hash costs a fraction of `Data`'s `Hasher`-based one.
    private var datas: [Data] = []
    private var dataObjects: [Int] = []
    private var dataSlots = BinaryPlistHashSlots()
    private var booleans: (false: Int, true: Int) = (-1, -1)
    /// Containers by a hash of kind and children.
    private var containerSlots = BinaryPlistHashSlots()
    /// Whether equal strings, data, containers and scalars are written once.
    private let sharing: Bool
    /// The value's size as the reader counts it: 8 per value, plus the UTF-8 bytes of each
    /// string and key and the bytes of each data, every occurrence counted.
    private(set) var expandedSize = 0

    /// - Parameters:
    ///   - sharing: whether equal strings, data and containers (and, then, scalars) are written once.
    ///   - capacity: the bytes to reserve for the file at once (a caller that knows its size).
    init(sharing: Bool = true, reservingCapacity capacity: Int = 0) {
        self.sharing = sharing
        if capacity > out.count { out.reserveCapacity(capacity) }
    }

    private enum ScalarKind: UInt8 {
        case integer, negativeInteger, real, date, uid
    }

    private struct Container {
        /// `0xA0` (array) or `0xD0` (dictionary).
        var marker: UInt8
        var object: Int
        var refStart: Int
        var refCount: Int
        /// Elements (arrays) or entries (dictionaries): what the marker counts.
        var count: Int
    }

    /// Adds `value`, nested inside `depth` containers, and everything in it; returns its
    /// post-order object number. A container nested deeper than any reader accepts is refused
    /// before its elements are visited, so the recursion is bounded by
    /// ``PlistNesting/maximumDepth`` whatever the value.
    mutating func add(_ value: PlistValue, depth: Int = 0) throws(PlistError) -> Int {
        expandedSize &+= 8
        switch value {
        case .string(let s):
            return addString(s)
        case .integer(let i):
            if sharing, let known = knownScalar(i.isNegative ? .negativeInteger : .integer, i.bits) { return known }
            return startScalar { $0.writeInteger(i) }
        case .real(let d):
            if sharing, let known = knownScalar(.real, d.bitPattern) { return known }
            return startScalar { $0.writeDouble(0x23, d) }
        case .bool(let b):
            let known = b ? booleans.true : booleans.false
            if sharing, known >= 0 { return known }
            let object = startObject { $0.out.append(b ? 0x09 : 0x08) }
            if b { booleans.true = object } else { booleans.false = object }
            return object
        case .date(let d):
            let t = d.timeIntervalSinceReferenceDate
            if sharing, let known = knownScalar(.date, t.bitPattern) { return known }
            return startScalar { $0.writeDouble(0x33, t) }
        case .data(let d):
            return addData(d)
        case .uid(let u):
            guard u <= UInt64(UInt32.max) else {
                throw PlistError(.unencodable, "UID \(u) is wider than 32 bits, which binary plist readers refuse")
            }
            if sharing, let known = knownScalar(.uid, u) { return known }
            return startScalar { $0.writeUID(UInt32(u)) }
        case .array(let elements):
            guard depth < PlistNesting.maximumDepth else { throw PlistNesting.tooDeep([]) }
            let base = pending.count
            for (i, element) in elements.enumerated() {
                do {
                    pending.append(Int32(try add(element, depth: depth + 1)))
                } catch {
                    throw noteTooDeep(error, under: .index(i))
                }
            }
            return addContainer(0xA0, count: elements.count, from: base)
        case .dictionary(let dictionary):
            guard depth < PlistNesting.maximumDepth else { throw PlistNesting.tooDeep([]) }
            let base = pending.count
            for key in dictionary.keys {
                expandedSize &+= 8
                pending.append(Int32(addString(key)))
            }
            for (key, element) in zip(dictionary.keys, dictionary.values) {
                do {
                    pending.append(Int32(try add(element, depth: depth + 1)))
                } catch {
                    throw noteTooDeep(error, under: .name(key))
                }
            }
            return addContainer(0xD0, count: dictionary.count, from: base)
        }
    }

    /// The keys from the container refused as too deep back up to the top, innermost first:
    /// collected only while a ``PlistNesting/tooDeep(_:)`` error unwinds.
    private var tooDeepPath: [PlistCodingKey] = []

    /// Notes that `error` came from under `key` when it is the nesting error, and returns it with
    /// the whole path once back at the top.
    private mutating func noteTooDeep(_ error: PlistError, under key: PlistCodingKey) -> PlistError {
        guard error.code == .tooDeep else { return error }
        tooDeepPath.append(key)
        return PlistNesting.tooDeep(tooDeepPath.reversed())
    }

    private typealias RawStringBits = (UInt64, UInt64)

    /// A string's representation as two words, or `nil` where `String` is not two words.
    @inline(__always)
    private static func rawBits(_ s: String) -> RawStringBits? {
        guard MemoryLayout<String>.size == MemoryLayout<RawStringBits>.size else { return nil }
        return unsafeBitCast(s, to: RawStringBits.self)
    }

    private mutating func addString(_ s: String) -> Int {
        expandedSize &+= s.utf8.count
        guard sharing else { return startObject { $0.writeString(s) } }
        let bits = Self.rawBits(s)
        var bitHash: UInt64 = 0
        if let bits {
            bitHash = BinaryPlistHashSlots.finish(BinaryPlistHashSlots.mix(BinaryPlistHashSlots.mix(BinaryPlistHashSlots.seed, bits.0), bits.1))
            if let known = stringBitSlots.find(hash: bitHash, isMatch: { stringBits[$0] == bits }) {
                return stringObjects[known]
            }
        }
        var text = s
        let next = strings.count
        let index = text.withUTF8 { bytes in
            stringSlots.findOrInsert(hash: BinaryPlistHashSlots.hash(bytes), next) { candidate in
                var other = strings[candidate]
                return other.withUTF8 { BinaryPlistText.equal(bytes, $0) }
            }
        }
        if index < next { return stringObjects[index] }
        strings.append(s)
        if let bits {
            stringBits.append(bits)
            stringBitSlots.insert(hash: bitHash, next)
        } else {
            stringBits.append((0, 0))
        }
        let object = startObject { $0.writeString(s) }
        stringObjects.append(object)
        return object
    }

    private mutating func addData(_ d: Data) -> Int {
        expandedSize &+= d.count
        guard sharing else { return startObject { $0.writeData(d) } }
        let next = datas.count
        let index = d.withUnsafeBytes { raw in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            return dataSlots.findOrInsert(hash: BinaryPlistHashSlots.hash(bytes), next) { candidate in
                datas[candidate].withUnsafeBytes { BinaryPlistText.equal(bytes, $0.assumingMemoryBound(to: UInt8.self)) }
            }
        }
        if index < next { return dataObjects[index] }
        datas.append(d)
        let object = startObject { $0.writeData(d) }
        dataObjects.append(object)
        return object
    }

    /// The object number of an equal scalar met before; else `nil`, and the scalar is recorded
    /// as the next entry of `scalars`, which ``startScalar(_:)`` then writes.
    private mutating func knownScalar(_ kind: ScalarKind, _ bits: UInt64) -> Int? {
        let next = scalars.count
        let hash = BinaryPlistHashSlots.finish(BinaryPlistHashSlots.mix(BinaryPlistHashSlots.seed ^ UInt64(kind.rawValue), bits))
        let found = scalarSlots.findOrInsert(hash: hash, next) { scalars[$0].kind == kind && scalars[$0].bits == bits }
        if found < next { return scalarObjects[found] }
        scalars.append((kind, bits))
        return nil
    }

    /// Writes the scalar just recorded by ``knownScalar(_:_:)`` (when sharing; else just writes it).
    @inline(__always)
    private mutating func startScalar(_ write: (inout Self) -> Void) -> Int {
        let object = startObject(write)
        if sharing { scalarObjects.append(object) }
        return object
    }

    /// Records a new scalar object at the current end of the file and writes it.
    @inline(__always)
    private mutating func startObject(_ write: (inout Self) -> Void) -> Int {
        let object = offsets.count
        offsets.append(out.count)
        write(&self)
        return object
    }

    /// The container whose children are `pending[base...]`: an existing equal one, or a new one.
    private mutating func addContainer(_ marker: UInt8, count: Int, from base: Int) -> Int {
        let refCount = pending.count - base
        var hash = BinaryPlistHashSlots.seed ^ UInt64(marker)
        for i in base ..< pending.count { hash = BinaryPlistHashSlots.mix(hash, UInt64(truncatingIfNeeded: pending[i])) }
        hash = BinaryPlistHashSlots.finish(hash)
        let next = containers.count
        let found = !sharing ? next : containerSlots.findOrInsert(hash: hash, next) { candidate in
            let c = containers[candidate]
            return c.marker == marker && c.refCount == refCount
                && refs[c.refStart ..< c.refStart + refCount].elementsEqual(pending[base...])
        }
        if found < next {
            pending.removeSubrange(base...)
            return containers[found].object
        }
        let object = offsets.count
        offsets.append(-1)
        containers.append(Container(marker: marker, object: object, refStart: refs.count, refCount: refCount, count: count))
        refs.append(contentsOf: pending[base...])
        pending.removeSubrange(base...)
        return object
    }

    // MARK: Finishing

    /// Appends the containers, the offset table and the trailer; returns the file.
    mutating func finish() -> [UInt8] {
        // What found equal objects is done with: free it before the output grows to its final
        // size, which is the moment of peak memory (6 MB XML to binary: 38.0 MB -> MEASURED).
        strings = []; stringObjects = []; stringSlots = BinaryPlistHashSlots()
        stringBits = []; stringBitSlots = BinaryPlistHashSlots()
        scalars = []; scalarObjects = []; scalarSlots = BinaryPlistHashSlots()
        datas = []; dataObjects = []; dataSlots = BinaryPlistHashSlots()
        containerSlots = BinaryPlistHashSlots()
        let objectCount = offsets.count
        let refSize = Self.width(for: objectCount)
        out.reserveCapacity(out.count + containerBytes(refSize: refSize) + objectCount * 8 + 32)
        for c in containers {
            offsets[c.object] = out.count
            writeHead(c.marker, c.count)
            let (refs, start) = (self.refs, c.refStart)
            appendBigEndian(c.refCount, size: refSize) { UInt64(objectCount - 1 - Int(refs[start + $0])) }
        }
        let tableOffset = out.count
        let offsetSize = Self.width(for: tableOffset)
        let offsets = self.offsets
        appendBigEndian(objectCount, size: offsetSize) { UInt64(offsets[objectCount - 1 - $0]) }
        // Trailer: 5 unused bytes, sort version, the two sizes, then count, top object, table offset.
        out.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)])
        appendBigEndian(UInt64(objectCount), size: 8)
        appendBigEndian(0, size: 8)
        appendBigEndian(UInt64(tableOffset), size: 8)
        return out
    }

    /// An upper bound for the bytes the containers take, to size the output once.
    private func containerBytes(refSize: Int) -> Int {
        containers.count * 10 + refs.count * refSize
    }

    /// The smallest of 1, 2, 4 and 8 bytes whose range exceeds `value`: CoreFoundation's rule
    /// for reference and offset sizes (its reader requires `value < 256^size`).
    static func width(for value: Int) -> Int {
        switch value {
        case ..<0x100: 1
        case ..<0x1_0000: 2
        case ..<0x1_0000_0000: 4
        default: 8
        }
    }

    // MARK: Object encodings

    /// A marker with its count: in the low nibble below 15, else nibble 0xF and an integer object.
    private mutating func writeHead(_ marker: UInt8, _ count: Int) {
        if count < 15 {
            out.append(marker | UInt8(count))
        } else {
            out.append(marker | 0x0F)
            writeInteger(PlistInteger(UInt64(count)))
        }
    }

    /// Non-negative values in 1, 2, 4 or 8 bytes (1-4 read as unsigned); negative ones as 8-byte
    /// two's complement; values above `Int64.max` as 16 bytes with the high half zero.
    private mutating func writeInteger(_ i: PlistInteger) {
        let bits = i.bits
        if i.isNegative || (bits > 0xFFFF_FFFF && bits <= UInt64(Int64.max)) {
            out.append(0x13)
            appendBigEndian(bits, size: 8)
        } else if bits <= 0xFF {
            out.append(0x10)
            out.append(UInt8(bits))
        } else if bits <= 0xFFFF {
            out.append(0x11)
            appendBigEndian(bits, size: 2)
        } else if bits <= 0xFFFF_FFFF {
            out.append(0x12)
            appendBigEndian(bits, size: 4)
        } else {
            out.append(0x14)
            appendBigEndian(0, size: 8)
            appendBigEndian(bits, size: 8)
        }
    }

    private mutating func writeDouble(_ marker: UInt8, _ d: Double) {
        out.append(marker)
        appendBigEndian(d.bitPattern, size: 8)
    }

    private mutating func writeUID(_ u: UInt32) {
        let size = u <= 0xFF ? 1 : u <= 0xFFFF ? 2 : 4
        out.append(0x80 | UInt8(size - 1))
        appendBigEndian(UInt64(u), size: size)
    }

    private mutating func writeData(_ d: Data) {
        writeHead(0x40, d.count)
        d.withUnsafeBytes { raw in out.append(contentsOf: raw.assumingMemoryBound(to: UInt8.self)) }
    }

    /// ASCII strings as `0x5_` bytes, others as `0x6_` UTF-16 big-endian, as CoreFoundation does.
    private mutating func writeString(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            if BinaryPlistText.isASCII(utf8) {
                writeHead(0x50, utf8.count)
                out.append(contentsOf: utf8)
            } else {
                writeUTF16BigEndian(utf8)
            }
        }
    }

    /// Transcodes valid UTF-8 (a `String`'s storage) to a `0x6_` object.
    private mutating func writeUTF16BigEndian(_ utf8: UnsafeBufferPointer<UInt8>) {
        // One unit per scalar, two for scalars with 4-byte encodings (lead byte >= 0xF0).
        var units = 0
        for b in utf8 {
            if b & 0xC0 != 0x80 { units += 1 }
            if b >= 0xF0 { units += 1 }
        }
        writeHead(0x60, units)
        out.reserveCapacity(out.count + 2 * units)
        var i = 0
        while i < utf8.count {
            let b = UInt32(utf8[i])
            var scalar: UInt32
            if b < 0x80 {
                scalar = b
                i += 1
            } else if b < 0xE0 {
                scalar = (b & 0x1F) << 6 | UInt32(utf8[i + 1] & 0x3F)
                i += 2
            } else if b < 0xF0 {
                scalar = (b & 0x0F) << 12 | UInt32(utf8[i + 1] & 0x3F) << 6 | UInt32(utf8[i + 2] & 0x3F)
                i += 3
            } else {
                scalar = (b & 0x07) << 18 | UInt32(utf8[i + 1] & 0x3F) << 12
                    | UInt32(utf8[i + 2] & 0x3F) << 6 | UInt32(utf8[i + 3] & 0x3F)
                i += 4
            }
            if scalar >= 0x10000 {
                scalar -= 0x10000
                appendBigEndian(UInt64(0xD800 | scalar >> 10), size: 2)
                scalar = 0xDC00 | scalar & 0x3FF
            }
            appendBigEndian(UInt64(scalar), size: 2)
        }
    }

    /// Appends `count` integers of `size` bytes, big-endian, the `i`th being `value(i)`.
    @inline(__always)
    private mutating func appendBigEndian(_ count: Int, size: Int, _ value: (Int) -> UInt64) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: count * size))
        out.withUnsafeMutableBytes { raw in
            var position = start
            for i in 0 ..< count {
                let v = value(i)
                switch size {
                case 1: raw[position] = UInt8(truncatingIfNeeded: v)
                case 2: raw.storeBytes(of: UInt16(truncatingIfNeeded: v).bigEndian, toByteOffset: position, as: UInt16.self)
                case 4: raw.storeBytes(of: UInt32(truncatingIfNeeded: v).bigEndian, toByteOffset: position, as: UInt32.self)
                default: raw.storeBytes(of: v.bigEndian, toByteOffset: position, as: UInt64.self)
                }
                position += size
            }
        }
    }

    @inline(__always)
    private mutating func appendBigEndian(_ value: UInt64, size: Int) {
        var shift = (size - 1) * 8
        while shift >= 0 {
            out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }
}
