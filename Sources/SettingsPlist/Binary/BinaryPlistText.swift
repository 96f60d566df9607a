// Text decoding for binary plists: ASCII (Latin-1 fallback) and UTF-16 big-endian strings.

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

    /// A UTF-16 big-endian (`0x6_`) string (the object at `offset`). A lone surrogate is an
    /// error: no Swift `String` can hold it, and replacing it (with U+FFFD) would change the text
    /// silently and could make two distinct dictionary keys one.
    static func utf16BigEndian(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) throws(PlistError) -> String {
        let units = bytes.count / 2
        var lone: (unit: UInt32, index: Int)?
        let text = String(unsafeUninitializedCapacity: units * 3) { out in
            var n = 0
            var i = 0
            while i < units {
                let u = UInt32(bytes[2 * i]) << 8 | UInt32(bytes[2 * i + 1])
                i += 1
                var scalar = u
                if u & 0xF800 == 0xD800 {
                    var paired = false
                    if u < 0xDC00, i < units {
                        let low = UInt32(bytes[2 * i]) << 8 | UInt32(bytes[2 * i + 1])
                        if low & 0xFC00 == 0xDC00 {
                            scalar = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)
                            i += 1
                            paired = true
                        }
                    }
                    if !paired {
                        lone = (u, i - 1)
                        return 0
                    }
                }
                n += encodeUTF8(scalar, into: out, at: n)
            }
            return n
        }
        if let lone {
            let hex = String(lone.unit, radix: 16, uppercase: true)
            throw PlistError(.invalidValue, "UTF-16 string holds a lone surrogate (0x\(hex), unit \(lone.index)), which is not text", at: .offset(offset))
        }
        return text
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
