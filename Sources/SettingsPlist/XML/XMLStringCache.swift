/// Strings made recently, found again by their bytes.
///
/// Property lists repeat themselves: every dictionary of a settings file has the same keys, and
/// many values recur. CoreFoundation uniques the strings it reads for the same reason. A hit
/// costs a hash and a compare instead of UTF-8 validation and, for long strings, an allocation;
/// the shared string is immutable, so sharing is invisible to callers.
///
/// The table is direct-mapped (a new string replaces whatever was in its slot) and sized from the
/// input, and only short strings are cached, so memory stays bounded by the input size.
struct XMLStringCache {
    /// Strings longer than this (in UTF-8 bytes) are not cached.
    static let maximumLength = 48

    private struct Slot {
        var hash: UInt64 = 0
        /// The first eight bytes (fewer for a shorter string, zero-padded).
        var head: UInt64 = 0
        /// Where the bytes after the first eight are in the arena.
        var offset: Int32 = 0
        /// -1 for an empty slot.
        var length: Int32 = -1
        var string = ""
    }

    private var slots: [Slot]
    private let mask: Int
    /// The bytes after the first eight of the cached strings, for comparing: `arena[..<arenaUsed]`.
    private var arena: [UInt8]
    private var arenaUsed = 0

    /// A cache suited to a document of `inputSize` bytes.
    init(inputSize: Int) {
        var n = 16
        while n < 4096, n * 64 < inputSize { n *= 2 }
        slots = [Slot](repeating: Slot(), count: n)
        mask = n - 1
        arena = [UInt8](repeating: 0, count: min(inputSize, n * 32))
    }

    /// The cached string with exactly these bytes, or `nil`.
    ///
    /// - Parameters:
    ///   - head: ``head(_:overread:)`` of the bytes.
    ///   - hash: ``hash(_:head:)`` of the bytes.
    @inline(__always)
    func lookup(_ bytes: UnsafeBufferPointer<UInt8>, head: UInt64, hash: UInt64) -> String? {
        let i = Int(truncatingIfNeeded: hash >> 7) & mask
        return slots.withUnsafeBufferPointer { slots -> String? in
            guard slots[i].hash == hash, slots[i].head == head, Int(slots[i].length) == bytes.count else { return nil }
            if bytes.count > 8 {
                let offset = Int(slots[i].offset)
                let rest = bytes.count - 8
                let same = arena.withUnsafeBufferPointer { arena in
                    XMLPlistParser.bytesEqual(UnsafeBufferPointer(rebasing: arena[offset ..< offset + rest]),
                                              UnsafeBufferPointer(rebasing: bytes[8...]))
                }
                guard same else { return nil }
            }
            return slots[i].string
        }
    }

    /// Remembers `string`, whose UTF-8 is `bytes`.
    @inline(__always)
    mutating func insert(_ string: String, bytes: UnsafeBufferPointer<UInt8>, head: UInt64, hash: UInt64) {
        let rest = max(bytes.count - 8, 0)
        let offset = arenaUsed
        guard offset + rest <= arena.count else { return }
        let i = Int(truncatingIfNeeded: hash >> 7) & mask
        slots[i] = Slot(hash: hash, head: head, offset: Int32(truncatingIfNeeded: offset),
                        length: Int32(truncatingIfNeeded: bytes.count), string: string)
        if rest > 0, let source = bytes.baseAddress {
            arena.withUnsafeMutableBufferPointer { arena in
                guard let target = arena.baseAddress else { return }
                (target + offset).update(from: source + 8, count: rest)
            }
            arenaUsed = offset + rest
        }
    }

    /// The first eight bytes as a little-endian word (fewer for shorter input, zero-padded).
    ///
    /// - Parameter overread: eight bytes may be loaded from the start even past the end (true
    ///   for text inside the document, which an end tag follows).
    @inline(__always)
    static func head(_ bytes: UnsafeBufferPointer<UInt8>, overread: Bool) -> UInt64 {
        guard let p = bytes.baseAddress else { return 0 }
        let n = bytes.count
        if n >= 8 || overread {
            let w = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
            return n >= 8 ? w : w & (UInt64.max >> (64 - 8 * UInt64(n)))
        }
        var w: UInt64 = 0
        for i in 0 ..< n { w |= UInt64(p[i]) << (8 * UInt64(i)) }
        return w
    }

    /// A fast 64-bit hash of the bytes, eight at a time; `head` is ``head(_:overread:)``.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>, head: UInt64) -> UInt64 {
        let k: UInt64 = 0x9E37_79B9_7F4A_7C15
        let n = bytes.count
        var h = (UInt64(truncatingIfNeeded: n) &* k ^ head) &* k
        h ^= h >> 29
        if n > 8, let p = bytes.baseAddress {
            var i = 8
            while i + 8 <= n {
                h = (h ^ UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)) &* k
                h ^= h >> 29
                i += 8
            }
            if i < n {
                // The last eight bytes, overlapping bytes already hashed.
                h = (h ^ UnsafeRawPointer(p + n - 8).loadUnaligned(as: UInt64.self)) &* k
                h ^= h >> 29
            }
        }
        return h &* k
    }

    /// ``hash(_:head:)`` for bytes that may not be read past their end.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        hash(bytes, head: head(bytes, overread: false))
    }
}
