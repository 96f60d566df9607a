#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<integer>`, `<real>`, `<date>`, `<data>`, `<true>` and `<false>` content, each read with
/// CoreFoundation's exact syntax.
extension XMLPlistParser {
    // MARK: Integers

    /// Reads a non-empty `<integer>`'s content and end tag.
    ///
    /// Syntax (CoreFoundation's `parseIntegerTag`): optional leading space, an optional sign,
    /// optional space again, then decimal digits or `0x`/`0X` and hex digits, and nothing else
    /// before the end tag. Entities and CDATA are not read here. The range is
    /// `Int64.min ... UInt64.max`.
    mutating func readInteger() throws(PlistError) -> PlistInteger {
        let start = pos
        skipIntegerSpace()
        var c = try integerByte()
        if c == UInt8(ascii: "<") { throw error(.invalidValue, "empty <integer>", at: start) }
        var negative = false
        if c == UInt8(ascii: "-") || c == UInt8(ascii: "+") {
            negative = c == UInt8(ascii: "-")
            pos += 1
            skipIntegerSpace()
            c = try integerByte()
        }
        var hex = false, leadingZero = false
        if c == UInt8(ascii: "0") {
            if pos + 1 < count, base[pos + 1] | 0x20 == UInt8(ascii: "x") {
                hex = true
                pos += 1
            } else {
                leadingZero = true
            }
            pos += 1
            c = try integerByte()
        }
        while c == UInt8(ascii: "0") {
            leadingZero = true
            pos += 1
            c = try integerByte()
        }
        if c == UInt8(ascii: "<") {
            guard leadingZero else { throw error(.invalidValue, "incomplete <integer>", at: start) }
            try expectEndTag(.integer)
            return PlistInteger(0 as Int64)
        }
        let radix: UInt64 = hex ? 16 : 10
        var value: UInt64 = 0
        while c != UInt8(ascii: "<") {
            let digit: UInt64
            switch c {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = UInt64(c) - 0x30
            case UInt8(ascii: "a") ... UInt8(ascii: "f") where hex: digit = UInt64(c) - 0x57
            case UInt8(ascii: "A") ... UInt8(ascii: "F") where hex: digit = UInt64(c) - 0x37
            default:
                throw error(.invalidValue, "unexpected '\(snippet(at: pos, upTo: 1))' in <integer>", at: pos)
            }
            let (shifted, o1) = value.multipliedReportingOverflow(by: radix)
            let (sum, o2) = shifted.addingReportingOverflow(digit)
            guard !o1, !o2 else { throw error(.integerOverflow, "integer above 18446744073709551615 (UInt64.max)", at: start) }
            value = sum
            if negative, value > UInt64(Int64.max) + 1 {
                throw error(.integerOverflow, "integer below -9223372036854775808 (Int64.min)", at: start)
            }
            pos += 1
            c = try integerByte()
        }
        try expectEndTag(.integer)
        return negative ? PlistInteger(Int64(bitPattern: 0 &- value)) : PlistInteger(value)
    }

    @inline(__always)
    private func integerByte() throws(PlistError) -> UInt8 {
        guard pos < count else { throw unexpectedEnd("in <integer>", at: pos) }
        return base[pos]
    }

    /// Skips what CoreFoundation's `isWhitespace` calls space inside `<integer>`: any byte below
    /// 0x21 or in 0x7F...0xA0, and the first byte of a few UTF-8 space characters (one byte at
    /// a time, exactly as CoreFoundation steps).
    private mutating func skipIntegerSpace() {
        while pos < count {
            let b = base[pos]
            var space = b < 0x21 || (b > 0x7E && b < 0xA1)
            if !space, b == 0xE2 || b == 0xE3, count - pos >= 3 {
                let b2 = base[pos + 1], b3 = base[pos + 2]
                if b == 0xE2, b2 == 0x80 {
                    space = (b3 >= 80 && b3 <= 0x8B) || b3 == 0xAF  // CF compares with decimal 80
                } else if b == 0xE2, b2 == 0x81 {
                    space = b3 == 0x9F
                } else if b == 0xE3, b2 == 0x80, b3 == 0x80 {
                    space = true
                }
            }
            guard space else { return }
            pos += 1
        }
    }

    // MARK: Reals

    /// Reads a non-empty `<real>`'s content (entities and CDATA allowed) and end tag.
    mutating func readReal() throws(PlistError) -> Double {
        let text = try scanText()
        let value: Double?
        if let end = text.rawEnd {
            value = Self.parseReal(UnsafeBufferPointer(start: base + text.start, count: end - text.start))
        } else {
            value = scratch.withUnsafeBufferPointer { Self.parseReal($0) }
        }
        guard let value else {
            throw error(.invalidValue, "invalid <real> '\(snippet(at: text.start))'", at: text.start)
        }
        try expectEndTag(.real)
        return value
    }

    /// CoreFoundation's `<real>` syntax: `nan`, `inf`, `infinity` in any case (the infinities
    /// with an optional sign), or leading space followed by exactly a C decimal number
    /// (`[+-]digits[.digits][e[+-]digits]`, no hex, nothing after it). Overflow gives infinity,
    /// underflow the correctly rounded tiny value or zero, as `strtod` does.
    static func parseReal(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let p = text.baseAddress else { return nil }
        let n = text.count
        if let special = specialReal(p, n) { return special }
        var i = skipRealSpace(p, n)
        let numberStart = i
        var negative = false
        if i < n, p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") {
            negative = p[i] == UInt8(ascii: "-")
            i += 1
        }
        // Significant digits go into `mantissa` while they fit; `exponent` tracks the scale.
        var mantissa: UInt64 = 0, digits = 0, exponent = 0
        var sawDigit = false, exact = true
        while i < n, p[i] &- 0x30 < 10 {
            accumulate(p[i], &mantissa, &digits, &exponent, &exact, fraction: false)
            sawDigit = true
            i += 1
        }
        if i < n, p[i] == UInt8(ascii: ".") {
            i += 1
            while i < n, p[i] &- 0x30 < 10 {
                accumulate(p[i], &mantissa, &digits, &exponent, &exact, fraction: true)
                sawDigit = true
                i += 1
            }
        }
        guard sawDigit else { return nil }
        if i < n, p[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            var expNegative = false
            if i < n, p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") {
                expNegative = p[i] == UInt8(ascii: "-")
                i += 1
            }
            var e = 0, expDigits = 0
            while i < n, p[i] &- 0x30 < 10 {
                if e < 100_000 { e = e * 10 + Int(p[i] - 0x30) }
                expDigits += 1
                i += 1
            }
            guard expDigits > 0 else { return nil }
            exponent += expNegative ? -e : e
        }
        guard i == n else { return nil }
        // Exact fast path (Clinger): an integer mantissa below 2^53 times a power of ten that is
        // itself exact in a Double is correctly rounded by one multiplication or division.
        if exact, mantissa < 1 << 53, exponent >= -22, exponent <= 22 {
            let m = Double(mantissa)
            let v = exponent >= 0 ? m * powersOfTen[exponent] : m / powersOfTen[-exponent]
            return negative ? -v : v
        }
        if exact, exponent >= -19, exponent <= 19 {
            let v = exactDecimal(mantissa, exponent)
            return negative ? -v : v
        }
        return Double(String(decoding: UnsafeBufferPointer(rebasing: text[numberStart ..< n]), as: UTF8.self))
    }

    /// The double nearest to `m × 10^e` (ties to even), for `|e| <= 19`, with exact 128-bit
    /// integer arithmetic: a product for `e >= 0`; for `e < 0` a quotient of at least 63 bits
    /// plus a sticky bit for the remainder.
    static func exactDecimal(_ m: UInt64, _ e: Int) -> Double {
        guard m != 0 else { return 0 }
        if e >= 0 {
            return rounded(UInt128(m) * UInt128(powersOfTenExact[e]), sticky: false, binaryExponent: 0)
        }
        // Scale m so its top bit is bit 126; dividing by 10^19 < 2^64 leaves at least 63 bits.
        let shift = 127 - (64 - m.leadingZeroBitCount)
        let (q, r) = (UInt128(m) << shift).quotientAndRemainder(dividingBy: UInt128(powersOfTenExact[-e]))
        return rounded(q, sticky: r != 0, binaryExponent: -shift)
    }

    /// `q × 2^binaryExponent` rounded to 53 bits, ties to even; `sticky` says a nonzero
    /// remainder lies beyond `q`'s last bit.
    private static func rounded(_ q: UInt128, sticky: Bool, binaryExponent: Int) -> Double {
        let bits = 128 - q.leadingZeroBitCount
        guard bits > 53 else {
            return Double(sign: .plus, exponent: binaryExponent, significand: Double(UInt64(truncatingIfNeeded: q)))
        }
        let extra = bits - 53
        var significand = UInt64(truncatingIfNeeded: q >> extra)
        let rest = q & ((UInt128(1) << extra) - 1)
        let half = UInt128(1) << (extra - 1)
        if rest > half || (rest == half && (sticky || significand & 1 == 1)) {
            significand += 1
        }
        return Double(sign: .plus, exponent: binaryExponent + extra, significand: Double(significand))
    }

    private static let powersOfTenExact: [UInt64] = (0 ... 19).map { (n: Int) -> UInt64 in
        var v: UInt64 = 1
        for _ in 0 ..< n { v *= 10 }
        return v
    }

    @inline(__always)
    private static func accumulate(_ c: UInt8, _ mantissa: inout UInt64, _ digits: inout Int, _ exponent: inout Int,
                                   _ exact: inout Bool, fraction: Bool) {
        if mantissa == 0, c == UInt8(ascii: "0") {
            if fraction { exponent -= 1 }
            return
        }
        if digits < 19 {
            mantissa = mantissa * 10 + UInt64(c - 0x30)
            digits += 1
            if fraction { exponent -= 1 }
        } else {
            // Digits beyond what fits: the fast path no longer applies.
            exact = false
            if !fraction { exponent += 1 }
        }
    }

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// `nan`, `inf`, `+inf`, `-inf`, `infinity`, `+infinity`, `-infinity`, in any case.
    private static func specialReal(_ p: UnsafePointer<UInt8>, _ n: Int) -> Double? {
        guard n >= 3, n <= 9 else { return nil }
        let signed = p[0] == UInt8(ascii: "+") || p[0] == UInt8(ascii: "-")
        let sign: Double = p[0] == UInt8(ascii: "-") ? -1 : 1
        let word = signed ? p + 1 : p
        let length = signed ? n - 1 : n
        if !signed, equalIgnoringCase(word, length, "nan") { return .nan }
        if equalIgnoringCase(word, length, "inf") || equalIgnoringCase(word, length, "infinity") { return sign * .infinity }
        return nil
    }

    /// Whether the `n` bytes at `p` spell the lowercase ASCII `literal` in any case.
    private static func equalIgnoringCase(_ p: UnsafePointer<UInt8>, _ n: Int, _ literal: StaticString) -> Bool {
        guard n == literal.utf8CodeUnitCount else { return false }
        for k in 0 ..< n where p[k] | 0x20 != literal.utf8Start[k] { return false }
        return true
    }

    /// Skips what `__CFIsWhitespace` calls space: code points below U+0021, U+007F...U+00A0,
    /// U+2000...U+200B and U+3000. Returns the index of the first other byte.
    private static func skipRealSpace(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        var i = 0
        while i < n {
            let b = p[i]
            if b < 0x21 || b == 0x7F {
                i += 1
            } else if b == 0xC2, i + 1 < n, p[i + 1] >= 0x80, p[i + 1] <= 0xA0 {
                i += 2
            } else if b == 0xE2, i + 2 < n, p[i + 1] == 0x80, p[i + 2] >= 0x80, p[i + 2] <= 0x8B {
                i += 3
            } else if b == 0xE3, i + 2 < n, p[i + 1] == 0x80, p[i + 2] == 0x80 {
                i += 3
            } else {
                break
            }
        }
        return i
    }

    // MARK: Dates

    /// Reads a non-empty `<date>`'s content and end tag: exactly `[-]YYYY-MM-DDTHH:MM:SSZ`,
    /// no fraction, no space, fields rolling over as in CoreFoundation.
    mutating func readDate() throws(PlistError) -> Date {
        let start = pos
        pos = tagStart(from: pos)
        let bytes = UnsafeBufferPointer(start: base + start, count: pos - start)
        guard let seconds = Self.commonDate(bytes) ?? PlistDate.parse(bytes, allowFraction: false) else {
            throw error(.invalidValue, "invalid <date> '\(snippet(at: start, upTo: 40))'", at: start)
        }
        try expectEndTag(.date)
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// The usual `YYYY-MM-DDTHH:MM:SSZ` read without allocating; `nil` for any other shape
    /// (which ``PlistDate/parse(_:allowFraction:)`` then judges).
    @inline(__always)
    static func commonDate(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        guard b.count == 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ from: Int, _ length: Int) -> Int64? {
            var v: Int64 = 0
            for i in from ..< from + length {
                let d = b[i] &- 0x30
                guard d < 10 else { return nil }
                v = v * 10 + Int64(d)
            }
            return v
        }
        guard let y = number(0, 4), let mo = number(5, 2), let d = number(8, 2),
              let h = number(11, 2), let mi = number(14, 2), let s = number(17, 2),
              let whole = PlistDate.seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
        else { return nil }
        return Double(whole)
    }

    // MARK: Data

    /// Reads a non-empty `<data>`'s base64 content and end tag, with CoreFoundation's lenient
    /// rules: whitespace and other ASCII outside the alphabet are skipped, only complete groups
    /// of four characters produce bytes, `=` counts as a zero digit and trims the group's output,
    /// and any byte >= 0x80 is an error.
    mutating func readData() throws(PlistError) -> Data {
        let start = pos
        let p = tagStart(from: pos)
        pos = p
        let input = UnsafeBufferPointer(start: base + start, count: p - start)
        let bound = input.count / 4 * 3
        if decoded.count < bound { decoded.append(contentsOf: repeatElement(0, count: bound - decoded.count)) }
        let result = decoded.withUnsafeMutableBufferPointer { out in
            Self.base64Table.withUnsafeBufferPointer { table in
                Self.decodeBase64(input, into: out, table: table)
            }
        }
        switch result {
        case .success(let written):
            let data = decoded.withUnsafeBytes { raw in
                raw.baseAddress.map { Data(bytes: $0, count: written) } ?? Data()
            }
            try expectEndTag(.data)
            return data
        case .failure(let offset):
            throw error(.invalidValue, "invalid byte 0x\(String(base[start + offset], radix: 16, uppercase: true)) in <data>",
                        at: start + offset)
        }
    }

    /// The bytes written, or the offset of the first byte >= 0x80.
    enum Base64Result {
        case success(Int)
        case failure(Int)
    }

    /// Decodes with CoreFoundation's rules into `out`, which has room for `input.count / 4 * 3`
    /// bytes. Whole groups of four plain digits take a fast path.
    private static func decodeBase64(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>,
                                     table: UnsafeBufferPointer<Int8>) -> Base64Result {
        var written = 0, digits = 0, equals = 0
        var acc: UInt32 = 0
        let n = input.count
        var i = 0
        while i < n {
            if digits & 3 == 0, i + 4 <= n {
                let a = table[Int(input[i])], b = table[Int(input[i + 1])]
                let c = table[Int(input[i + 2])], d = table[Int(input[i + 3])]
                if UInt8(bitPattern: a | b | c | d) < 64 {
                    acc = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[written] = UInt8(truncatingIfNeeded: acc >> 16)
                    out[written + 1] = UInt8(truncatingIfNeeded: acc >> 8)
                    out[written + 2] = UInt8(truncatingIfNeeded: acc)
                    written += 3
                    equals = 0
                    digits += 4
                    i += 4
                    continue
                }
            }
            let v = table[Int(input[i])]
            if v >= 0 {
                if v == 64 { equals += 1 } else { equals = 0 }
                acc = acc &<< 6 | UInt32(v & 63)
                digits += 1
                if digits & 3 == 0 {
                    out[written] = UInt8(truncatingIfNeeded: acc >> 16)
                    written += 1
                    if equals < 2 { out[written] = UInt8(truncatingIfNeeded: acc >> 8); written += 1 }
                    if equals < 1 { out[written] = UInt8(truncatingIfNeeded: acc); written += 1 }
                }
            } else if v == base64Other {
                equals = 0
            } else if v == base64Invalid {
                return .failure(i)
            }
            i += 1
        }
        return .success(written)
    }

    private static let base64Space: Int8 = -1
    private static let base64Other: Int8 = -2
    private static let base64Invalid: Int8 = -3

    /// Per byte: 0...63 a base64 digit, 64 for `=`, or one of the negative classes above.
    private static let base64Table: [Int8] = (0 ... 255).map { (b: Int) -> Int8 in
        switch b {
        case 0x41 ... 0x5A: Int8(b - 0x41)
        case 0x61 ... 0x7A: Int8(b - 0x61 + 26)
        case 0x30 ... 0x39: Int8(b - 0x30 + 52)
        case 0x2B: 62
        case 0x2F: 63
        case 0x3D: 64
        case 0x20, 0x09 ... 0x0D: base64Space
        case 0x80...: base64Invalid
        default: base64Other
        }
    }
}
