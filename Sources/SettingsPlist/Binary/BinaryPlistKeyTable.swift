// String uniquing for the binary reader and writer: key numbering and the hash-slot table.

/// Numbers distinct key texts 0, 1, 2... by their UTF-8 bytes (that is, by code points).
struct BinaryPlistKeyTable {
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
    /// Per slot: the high half of a hash with the low bit set (0 = empty), and its number.
    /// 32 bits of hash are plenty to pick slots and to skip most unequal candidates (callers
    /// compare the entries themselves), at half the memory.
    /// Empty until the first entry: a writer that never looks anything up (small values,
    /// written unshared) allocates nothing.
    private var hashes: [UInt32] = []
    /// Numbers as 32 bits (half the table's memory): 2^31 distinct objects would need far more
    /// memory than any value tree here can have, and binary readers refuse such files.
    private var numbers: [Int32] = []
    private var count = 0

    /// The table's first 64 slots, at its first entry.
    private mutating func allocate() {
        hashes = [UInt32](repeating: 0, count: 64)
        numbers = [Int32](repeating: 0, count: 64)
    }

    static let seed: UInt64 = {
        var hasher = Hasher()
        hasher.combine(0x6B65_7973 as UInt64)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }()

    /// The number of the entry matching `isMatch` among those with `hash`; else records `next`
    /// under `hash` and returns it.
    @inline(__always)
    mutating func findOrInsert(hash: UInt64, _ next: Int, isMatch: (Int) -> Bool) -> Int {
        if hashes.isEmpty { allocate() }
        let hash = UInt32(truncatingIfNeeded: hash >> 32) | 1
        let mask = hashes.count - 1
        var slot = Int(truncatingIfNeeded: hash >> 1) & mask
        while hashes[slot] != 0 {
            if hashes[slot] == hash && isMatch(Int(numbers[slot])) { return Int(numbers[slot]) }
            slot = (slot + 1) & mask
        }
        hashes[slot] = hash
        numbers[slot] = Int32(next)
        count += 1
        if count * 2 > hashes.count { grow() }
        return next
    }

    /// The number of the entry matching `isMatch` among those with `hash`, or `nil`.
    @inline(__always)
    func find(hash: UInt64, isMatch: (Int) -> Bool) -> Int? {
        guard !hashes.isEmpty else { return nil }
        let hash = UInt32(truncatingIfNeeded: hash >> 32) | 1
        let mask = hashes.count - 1
        var slot = Int(truncatingIfNeeded: hash >> 1) & mask
        while hashes[slot] != 0 {
            if hashes[slot] == hash && isMatch(Int(numbers[slot])) { return Int(numbers[slot]) }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Records `number` under `hash`; the caller knows no entry matches.
    mutating func insert(hash: UInt64, _ number: Int) {
        if hashes.isEmpty { allocate() }
        let hash = UInt32(truncatingIfNeeded: hash >> 32) | 1
        let mask = hashes.count - 1
        var slot = Int(truncatingIfNeeded: hash >> 1) & mask
        while hashes[slot] != 0 { slot = (slot + 1) & mask }
        hashes[slot] = hash
        numbers[slot] = Int32(number)
        count += 1
        if count * 2 > hashes.count { grow() }
    }

    /// Doubles the table. Works on buffers: array subscripts on `self` would check uniqueness
    /// on every store, which made growing cost more than all the lookups.
    private mutating func grow() {
        let size = hashes.count * 2
        let mask = size - 1
        var newHashes = [UInt32](repeating: 0, count: size)
        var newNumbers = [Int32](repeating: 0, count: size)
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
