/// Finding an XML plist's character encoding and converting it to UTF-8 before parsing.
///
/// This follows CoreFoundation's `encodingForXMLData`: byte-order marks first (UTF-32, UTF-8,
/// UTF-16), then a document without a BOM whose first or second byte is zero counts as UTF-16,
/// then an `encoding="..."` in an `<?xml` declaration at the very first byte. Anything else is UTF-8.
enum XMLSourceEncoding: Equatable {
    /// UTF-8 already: parse the bytes in place, after skipping `skip` BOM bytes.
    case utf8(skip: Int)
    /// UTF-16 in the given byte order, starting after `skip` bytes.
    case utf16(bigEndian: Bool, skip: Int)
    /// UTF-32 in the given byte order, starting after `skip` bytes.
    case utf32(bigEndian: Bool, skip: Int)
    /// Seven-bit ASCII: any byte >= 0x80 is an error.
    case ascii
    /// A single-byte character set: bytes >= 0x80 map through `high` (128 code points).
    case singleByte(high: [UInt16])

    /// The encoding of `bytes`, from a byte-order mark or the XML declaration.
    ///
    /// - Throws: ``PlistError/Code/unknownFormat`` for a declared encoding this reader cannot convert,
    ///   or a declaration cut off before its encoding name.
    static func detect(_ bytes: UnsafeBufferPointer<UInt8>) throws(PlistError) -> XMLSourceEncoding {
        let n = bytes.count
        if n > 4 {
            if bytes[0] == 0x00, bytes[1] == 0x00, bytes[2] == 0xFE, bytes[3] == 0xFF { return .utf32(bigEndian: true, skip: 4) }
            if bytes[0] == 0xFF, bytes[1] == 0xFE, bytes[2] == 0x00, bytes[3] == 0x00 { return .utf32(bigEndian: false, skip: 4) }
        }
        if n > 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { return .utf8(skip: 3) }
        if n > 2 {
            if bytes[0] == 0xFF, bytes[1] == 0xFE { return .utf16(bigEndian: false, skip: 2) }
            if bytes[0] == 0xFE, bytes[1] == 0xFF { return .utf16(bigEndian: true, skip: 2) }
            // UTF-16 without a BOM. CoreFoundation also skips two bytes here (dropping the
            // first character), so such a document only parses when it starts with whitespace.
            if bytes[0] == 0x00 || bytes[1] == 0x00 { return .utf16(bigEndian: bytes[0] == 0x00, skip: 2) }
        }
        return try declared(bytes)
    }

    /// The encoding named by `<?xml ... encoding="NAME"` at the start of `bytes`, or UTF-8.
    private static func declared(_ bytes: UnsafeBufferPointer<UInt8>) throws(PlistError) -> XMLSourceEncoding {
        let n = bytes.count
        guard n >= 5, bytes.starts(with: "<?xml".utf8) else { return .utf8(skip: 0) }
        var i = 5
        var found = false
        // Look for `encoding=` before the declaration's first `?` or `>`, as CoreFoundation does.
        while i < n {
            let c = bytes[i]
            if c == UInt8(ascii: "?") || c == UInt8(ascii: ">") { return .utf8(skip: 0) }
            i += 1
            if i + 8 >= n {
                throw PlistError(.unknownFormat, "XML declaration ends before its encoding name", at: .line(1, column: i + 1))
            }
            if c == UInt8(ascii: "e"), UnsafeBufferPointer(rebasing: bytes[i ..< i + 8]).elementsEqual("ncoding=".utf8) {
                i += 8
                found = true
                break
            }
        }
        guard found, i < n else { return .utf8(skip: 0) }
        let quote = bytes[i]
        guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return .utf8(skip: 0) }
        let nameStart = i + 1
        var nameEnd = nameStart
        while nameEnd < n, bytes[nameEnd] != quote { nameEnd += 1 }
        guard nameEnd < n else { return .utf8(skip: 0) }
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[nameStart ..< nameEnd]), as: Unicode.ASCII.self)
        guard let encoding = named(name) else {
            throw PlistError(.unknownFormat, "unsupported encoding \"\(name)\"", at: .line(1, column: nameStart + 1))
        }
        return encoding
    }

    /// The encoding for an IANA charset name (case-insensitive), for the charsets this reader converts.
    static func named(_ name: String) -> XMLSourceEncoding? {
        switch name.lowercased() {
        case "utf-8", "utf8":
            return .utf8(skip: 0)
        case "us-ascii", "ascii", "ansi_x3.4-1968", "ansi_x3.4-1986", "iso646-us", "iso_646.irv:1991",
             "us", "ibm367", "cp367", "csascii", "iso-ir-6":
            return .ascii
        case "iso-8859-1", "iso_8859-1", "iso8859-1", "iso_8859-1:1987", "latin1", "l1", "ibm819",
             "cp819", "csisolatin1", "iso-ir-100":
            return .singleByte(high: latin1High)
        case "windows-1252", "cp1252", "x-cp1252":
            return .singleByte(high: windows1252High)
        case "iso-8859-15", "iso_8859-15", "iso8859-15", "latin-9", "latin9", "l9":
            return .singleByte(high: latin9High)
        case "macintosh", "mac", "macroman", "x-mac-roman", "csmacintosh":
            return .singleByte(high: macRomanHigh)
        case "utf-16", "utf-16be", "ucs-2", "iso-10646-ucs-2":
            return .utf16(bigEndian: true, skip: 0)
        case "utf-16le":
            return .utf16(bigEndian: false, skip: 0)
        case "utf-32", "utf-32be", "ucs-4", "iso-10646-ucs-4":
            return .utf32(bigEndian: true, skip: 0)
        case "utf-32le":
            return .utf32(bigEndian: false, skip: 0)
        default:
            return nil
        }
    }

    /// The document converted to UTF-8. Lone UTF-16 surrogates become three-byte sequences that
    /// the string reader then rejects, so they fail where CoreFoundation fails: inside a string.
    ///
    /// - Throws: ``PlistError/Code/invalidValue`` for bytes the encoding cannot have.
    func transcode(_ bytes: UnsafeBufferPointer<UInt8>) throws(PlistError) -> [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .utf8(let skip):
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[skip...]))
        case .ascii:
            out.reserveCapacity(bytes.count)
            for b in bytes {
                guard b < 0x80 else { throw Self.conversionError(out, "byte 0x\(String(b, radix: 16)) is not ASCII") }
                out.append(b)
            }
        case .singleByte(let high):
            out.reserveCapacity(bytes.count + bytes.count / 2)
            for b in bytes {
                if b < 0x80 { out.append(b) } else { Self.appendUTF8(UInt32(high[Int(b) - 0x80]), to: &out) }
            }
        case .utf16(let bigEndian, let skip):
            try Self.transcodeUTF16(UnsafeBufferPointer(rebasing: bytes[skip...]), bigEndian: bigEndian, into: &out)
        case .utf32(let bigEndian, let skip):
            try Self.transcodeUTF32(UnsafeBufferPointer(rebasing: bytes[skip...]), bigEndian: bigEndian, into: &out)
        }
        return out
    }

    private static func transcodeUTF16(_ bytes: UnsafeBufferPointer<UInt8>, bigEndian: Bool, into out: inout [UInt8]) throws(PlistError) {
        guard bytes.count % 2 == 0 else { throw conversionError(out, "UTF-16 text with an odd number of bytes") }
        out.reserveCapacity(bytes.count)
        let units = bytes.count / 2
        func unit(_ i: Int) -> UInt32 {
            let a = UInt32(bytes[2 * i]), b = UInt32(bytes[2 * i + 1])
            return bigEndian ? a << 8 | b : b << 8 | a
        }
        var i = 0
        while i < units {
            let u = unit(i)
            i += 1
            if u >= 0xD800, u < 0xDC00, i < units {
                let low = unit(i)
                if low >= 0xDC00, low < 0xE000 {
                    i += 1
                    appendUTF8(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00), to: &out)
                    continue
                }
            }
            appendUTF8(u, to: &out)
        }
    }

    private static func transcodeUTF32(_ bytes: UnsafeBufferPointer<UInt8>, bigEndian: Bool, into out: inout [UInt8]) throws(PlistError) {
        guard bytes.count % 4 == 0 else { throw conversionError(out, "UTF-32 text with a partial character") }
        out.reserveCapacity(bytes.count / 2)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i]), b1 = UInt32(bytes[i + 1]), b2 = UInt32(bytes[i + 2]), b3 = UInt32(bytes[i + 3])
            let scalar = bigEndian ? b0 << 24 | b1 << 16 | b2 << 8 | b3 : b3 << 24 | b2 << 16 | b1 << 8 | b0
            guard scalar < 0x110000, scalar & 0xFFFF_F800 != 0xD800 else {
                throw conversionError(out, "invalid UTF-32 code point 0x\(String(scalar, radix: 16))")
            }
            appendUTF8(scalar, to: &out)
            i += 4
        }
    }

    /// Appends the UTF-8 form of `v` (a code point, or a lone surrogate written the same way).
    static func appendUTF8(_ v: UInt32, to out: inout [UInt8]) {
        switch v {
        case 0 ..< 0x80:
            out.append(UInt8(v))
        case 0x80 ..< 0x800:
            out.append(UInt8(0xC0 | v >> 6))
            out.append(UInt8(0x80 | v & 0x3F))
        case 0x800 ..< 0x10000:
            out.append(UInt8(0xE0 | v >> 12))
            out.append(UInt8(0x80 | (v >> 6) & 0x3F))
            out.append(UInt8(0x80 | v & 0x3F))
        default:
            out.append(UInt8(0xF0 | (v >> 18) & 0x07))
            out.append(UInt8(0x80 | (v >> 12) & 0x3F))
            out.append(UInt8(0x80 | (v >> 6) & 0x3F))
            out.append(UInt8(0x80 | v & 0x3F))
        }
    }

    /// An error placed at the end of the text converted so far (lines survive conversion).
    private static func conversionError(_ converted: [UInt8], _ message: String) -> PlistError {
        let position = converted.withUnsafeBufferPointer { XMLPlistReader.position(in: $0, offset: $0.count) }
        return PlistError(.invalidValue, message, at: position)
    }

    // MARK: Tables for the upper half (0x80...0xFF) of the single-byte charsets

    static let latin1High: [UInt16] = (0x80 ... 0xFF).map { UInt16($0) }

    static let latin9High: [UInt16] = {
        var t = latin1High
        for (byte, scalar) in [(0xA4, 0x20AC), (0xA6, 0x0160), (0xA8, 0x0161), (0xB4, 0x017D),
                               (0xB8, 0x017E), (0xBC, 0x0152), (0xBD, 0x0153), (0xBE, 0x0178)] {
            t[byte - 0x80] = UInt16(scalar)
        }
        return t
    }()

    /// Windows-1252; its five unassigned bytes map to the C1 controls of the same value.
    static let windows1252High: [UInt16] = {
        var t = latin1High
        let c1: [UInt16] = [
            0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
            0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
            0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
            0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
        ]
        t.replaceSubrange(0 ..< 32, with: c1)
        return t
    }()

    static let macRomanHigh: [UInt16] = [
        0x00C4, 0x00C5, 0x00C7, 0x00C9, 0x00D1, 0x00D6, 0x00DC, 0x00E1,
        0x00E0, 0x00E2, 0x00E4, 0x00E3, 0x00E5, 0x00E7, 0x00E9, 0x00E8,
        0x00EA, 0x00EB, 0x00ED, 0x00EC, 0x00EE, 0x00EF, 0x00F1, 0x00F3,
        0x00F2, 0x00F4, 0x00F6, 0x00F5, 0x00FA, 0x00F9, 0x00FB, 0x00FC,
        0x2020, 0x00B0, 0x00A2, 0x00A3, 0x00A7, 0x2022, 0x00B6, 0x00DF,
        0x00AE, 0x00A9, 0x2122, 0x00B4, 0x00A8, 0x2260, 0x00C6, 0x00D8,
        0x221E, 0x00B1, 0x2264, 0x2265, 0x00A5, 0x00B5, 0x2202, 0x2211,
        0x220F, 0x03C0, 0x222B, 0x00AA, 0x00BA, 0x03A9, 0x00E6, 0x00F8,
        0x00BF, 0x00A1, 0x00AC, 0x221A, 0x0192, 0x2248, 0x2206, 0x00AB,
        0x00BB, 0x2026, 0x00A0, 0x00C0, 0x00C3, 0x00D5, 0x0152, 0x0153,
        0x2013, 0x2014, 0x201C, 0x201D, 0x2018, 0x2019, 0x00F7, 0x25CA,
        0x00FF, 0x0178, 0x2044, 0x20AC, 0x2039, 0x203A, 0xFB01, 0xFB02,
        0x2021, 0x00B7, 0x201A, 0x201E, 0x2030, 0x00C2, 0x00CA, 0x00C1,
        0x00CB, 0x00C8, 0x00CD, 0x00CE, 0x00CF, 0x00CC, 0x00D3, 0x00D4,
        0xF8FF, 0x00D2, 0x00DA, 0x00DB, 0x00D9, 0x0131, 0x02C6, 0x02DC,
        0x00AF, 0x02D8, 0x02D9, 0x02DA, 0x00B8, 0x02DD, 0x02DB, 0x02C7,
    ]
}
