#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes XML property lists laid out byte for byte as Apple's writers lay them out
/// (CoreFoundation's `_CFAppendXML0`, swift-foundation's `_XMLPlistEncodingFormat`):
///
/// - the fixed `<?xml ...?>`, `<!DOCTYPE ...>`, `<plist version="1.0">` header, the root at
///   depth 0, one tab per nesting level, `</plist>` and a final newline;
/// - empty containers as `<array/>` / `<dict/>`, Booleans as `<true/>` / `<false/>`;
/// - `<data>` as base64 lines of `76 - 8 × min(depth, 8)` characters, indented like the tag
///   (at most 8 tabs);
/// - dates as whole seconds, floored (`<date>2024-01-02T03:04:05Z</date>`), in the proleptic
///   Gregorian calendar (no Julian days before 1582-10-15, as plistlib and libplist);
/// - UIDs as a `CF$UID` dictionary.
///
/// Where Apple's writers differ, or lose information, the choices are:
/// - reals as swift-foundation writes them: the shortest decimal that reads back to the same
///   double (`0.1`, `1e+300`, `-0`), whole values without `.0`, and `nan`, `+infinity`,
///   `-infinity`. (CoreFoundation writes 17 significant digits, `0.10000000000000001`, and
///   writes `-0.0` as `0.0`, losing the sign.)
/// - keys in the dictionary's own order (Apple's writers sort them).
/// - CR in text as `&#13;`: XML parsers turn a raw CR into LF (XML end-of-line handling), the
///   character reference survives every reader.
/// - characters XML 1.0 cannot carry (controls other than tab, LF, CR; U+FFFE; U+FFFF) are
///   refused with ``PlistError/Code/unencodable`` (CoreFoundation writes them raw, making a
///   document that conforming XML parsers reject).
/// - dates that XML text cannot carry (NaN, infinities, beyond years -99,999,999 ... 99,999,999,
///   which our reader reads) are refused with ``PlistError/Code/unencodable``, never clamped
///   to another date; the binary format carries every date exactly.
///
/// A first pass sizes the document (and refuses one over 2 GiB); the second writes it straight
/// into the result array with unchecked stores after one room check per line. Containers are
/// walked with an explicit stack, so no nesting depth can exhaust the call stack.
enum XMLPlistWriter {
    static func write(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        try write(value, sizeLimit: maximumSize)
    }

    /// Writes `value`, refusing documents of more than `sizeLimit` bytes.
    ///
    /// A value read from a small binary plist whose objects are referenced many times (each
    /// reference shares storage) can describe a document far larger than memory; XML repeats
    /// every reference in full, so such a value is refused before anything is written.
    static func write(_ value: PlistValue, sizeLimit: Int) throws(PlistError) -> [UInt8] {
        let estimate = estimatedSize(of: value, stoppingAbove: sizeLimit)
        guard estimate <= sizeLimit else {
            throw PlistError(.unencodable, "the XML document would be larger than \(sizeLimit) bytes; shared values are written out in full in XML, use the binary format")
        }
        // Write straight into the result's storage; only a document that outgrows the estimate
        // (much escaped text) moves to a buffer of its own and is copied once at the end.
        var failure: PlistError?
        var outgrown: [UInt8]?
        let bytes = [UInt8](unsafeUninitializedCapacity: estimate) { buffer, initialized in
            var out = XMLOutput(writingInto: buffer)
            do throws(PlistError) {
                try writeDocument(value, into: &out)
            } catch {
                failure = error
                return
            }
            if out.hasOutgrown(buffer) {
                outgrown = out.copyToArray()
            } else {
                initialized = out.count
            }
        }
        if let failure { throw failure }
        return outgrown ?? bytes
    }

    /// Writes `value` as `Data` that owns the written buffer: no copy of the document, which
    /// for `settings convert` of a large file saves a copy of the output's size in memory and time.
    static func writeData(_ value: PlistValue) throws(PlistError) -> Data {
        let estimate = estimatedSize(of: value, stoppingAbove: maximumSize)
        guard estimate <= maximumSize else {
            throw PlistError(.unencodable, "the XML document would be larger than \(maximumSize) bytes; shared values are written out in full in XML, use the binary format")
        }
        var out = XMLOutput(writingInto: .allocate(capacity: Swift.max(estimate, 1)), owning: true)
        try writeDocument(value, into: &out)
        return out.takeData()
    }

    private static func writeDocument(_ root: PlistValue, into out: inout XMLOutput) throws(PlistError) {
        out.append(literal: header)
        var open: [OpenContainer] = []
        if let child = try out.appendValue(root, depth: 0) { open.append(child) }
        while let top = open.indices.last {
            // Write the innermost open container's elements until one is a non-empty container.
            let container = open[top]
            let depth = open.count
            var index = container.next
            var child: OpenContainer?
            try container.values.withUnsafeBufferPointer { values throws(PlistError) in
                while index < values.count && child == nil {
                    // A container here would be nested `depth + 1` deep: no reader accepts more
                    // than `maximumDepth` (checked only at that depth, so it costs nothing else).
                    if depth >= PlistNesting.maximumDepth, values[index].isContainer {
                        var path = open[..<top].map { $0.pathKey(at: $0.next - 1) }
                        path.append(container.pathKey(at: index))
                        throw PlistNesting.tooDeep(path)
                    }
                    if let keys = container.keys {
                        try out.appendText(keys[index], depth: depth, open: "<key>", close: "</key>\n", what: "key")
                    }
                    child = try out.appendValue(values[index], depth: depth)
                    index += 1
                }
            }
            if let child {
                open[top].next = index
                open.append(child)
            } else {
                open.removeLast()
                out.appendLine(container.keys == nil ? "</array>\n" : "</dict>\n", depth: depth - 1)
            }
        }
        out.append(literal: "</plist>\n")
    }

    /// The largest document written: 2 GiB.
    static let maximumSize = Int(Int32.max)

    /// The document's size, exact except that text is counted unescaped and reals at their
    /// longest (escapes are rare in settings, so this is nearly always the final capacity).
    /// Counting stops once past `limit` (the result is then some size above it).
    static func estimatedSize(of root: PlistValue, stoppingAbove limit: Int) -> Int {
        var size = SaturatingSum(header.utf8CodeUnitCount + 9)
        var open: [OpenContainer] = []
        var child: OpenContainer?
        size.add(estimatedSize(of: root, depth: 0, child: &child))
        if let child { open.append(child) }
        while let top = open.indices.last, size.total <= limit {
            let container = open[top]
            let depth = open.count
            var index = container.next
            child = nil
            container.values.withUnsafeBufferPointer { values in
                while index < values.count && child == nil && size.total <= limit {
                    if let keys = container.keys { size.add(depth + 12 + keys[index].utf8.count) }
                    size.add(estimatedSize(of: values[index], depth: depth, child: &child))
                    index += 1
                }
            }
            if let child {
                open[top].next = index
                open.append(child)
            } else {
                open.removeLast()   // its closing tag is counted with the opening one
            }
        }
        return size.total
    }

    /// The size of one value's lines (both tags of a container); a non-empty container is
    /// returned in `child` for its elements to be counted next.
    private static func estimatedSize(of value: PlistValue, depth: Int, child: inout OpenContainer?) -> Int {
        switch value {
        case .string(let s): return depth + 18 + s.utf8.count
        case .integer: return depth + 40
        case .real: return depth + 39
        case .bool: return depth + 9
        case .date: return depth + 45
        case .data(let d): return XMLOutput.dataSize(byteCount: d.count, depth: depth)
        case .uid: return 4 * depth + 80
        case .array(let a):
            if a.isEmpty { return depth + 9 }
            child = OpenContainer(keys: nil, values: a)
            return 2 * depth + 17
        case .dictionary(let d):
            if d.isEmpty { return depth + 8 }
            child = OpenContainer(keys: d.keys, values: d.values)
            return 2 * depth + 15
        }
    }

    static let header: StaticString = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """
}

/// A running total that sticks at `Int.max` instead of trapping.
private struct SaturatingSum {
    private(set) var total: Int
    init(_ start: Int) { total = start }
    mutating func add(_ n: Int) {
        let (sum, overflow) = total.addingReportingOverflow(n)
        total = overflow ? Int.max : sum
    }
}

/// An array or dictionary whose opening tag is written and whose elements are being written.
private struct OpenContainer {
    /// The dictionary's keys, or `nil` for an array.
    let keys: [String]?
    let values: [PlistValue]
    /// The element to write next.
    var next = 0

    /// The coding key of element `index`: its key, or its position in an array.
    func pathKey(at index: Int) -> PlistCodingKey {
        keys.map { .name($0[index]) } ?? .index(index)
    }
}

/// The output bytes: one buffer grown by doubling, written through unchecked appends after a
/// `reserve` that covers each whole line.
private struct XMLOutput: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    /// Whether `start` was allocated here (after outgrowing the caller's buffer) and is freed here.
    private var ownsStorage: Bool

    /// An output that fills `buffer` first (without owning it), then a buffer of its own.
    init(writingInto buffer: UnsafeMutableBufferPointer<UInt8>) {
        if let base = buffer.baseAddress, buffer.count > 0 {
            start = base
            capacity = buffer.count
            ownsStorage = false
        } else {
            capacity = 4096
            start = .allocate(capacity: capacity)
            ownsStorage = true
        }
    }

    /// An output that fills `buffer`, which it owns (frees or hands on) from now on.
    init(writingInto buffer: UnsafeMutableBufferPointer<UInt8>, owning: Bool) {
        self.init(writingInto: buffer)
        ownsStorage = ownsStorage || owning
    }

    deinit {
        if ownsStorage { start.deallocate() }
    }

    /// The bytes written, as `Data` that takes over the storage when this output owns it.
    consuming func takeData() -> Data {
        let (start, count, owned) = (self.start, self.count, self.ownsStorage)
        discard self
        guard owned else { return Data(UnsafeBufferPointer(start: start, count: count)) }
        return Data(bytesNoCopy: start, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// Whether the bytes are no longer in `buffer`.
    func hasOutgrown(_ buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        start != buffer.baseAddress
    }

    /// A copy of the bytes written.
    func copyToArray() -> [UInt8] {
        Array(UnsafeBufferPointer(start: start, count: count))
    }

    // MARK: Raw appends

    /// Makes room for `n` more bytes.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if capacity - count < n { grow(toFit: n) }
    }

    @inline(never)
    private mutating func grow(toFit n: Int) {
        let newCapacity = max(capacity * 2, count + n)
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: start, count: count)
        if ownsStorage { start.deallocate() }
        start = bigger
        ownsStorage = true
        capacity = newCapacity
    }

    /// Appends a literal, reserving room for it.
    mutating func append(literal: StaticString) {
        reserve(literal.utf8CodeUnitCount)
        put(literal)
    }

    // The `put` functions write without checking room: the caller has reserved it.

    @inline(__always)
    private mutating func put(_ literal: StaticString) {
        put(literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        assert(count < capacity, "write past the reserved room")
        start[count] = byte
        count += 1
    }

    /// Copies `n` bytes. Tags and most settings text are short: up to 16 bytes are moved with
    /// two overlapping word loads and stores instead of a call to `memmove`.
    @inline(__always)
    private mutating func put(_ bytes: UnsafePointer<UInt8>, count n: Int) {
        assert(n <= capacity - count, "write past the reserved room")
        let source = UnsafeRawPointer(bytes)
        let target = UnsafeMutableRawPointer(start + count)
        if n >= 8 && n <= 16 {
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 && n < 8 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
        } else {
            target.copyMemory(from: source, byteCount: n)
        }
        count += n
    }

    /// Writes `n` tabs, eight at a time (indentation is short: no call to `memset`).
    @inline(__always)
    private mutating func putTabs(_ n: Int) {
        assert(n <= capacity - count, "write past the reserved room")
        var target = UnsafeMutableRawPointer(start + count)
        var left = n
        while left >= 8 {
            target.storeBytes(of: 0x0909_0909_0909_0909 as UInt64, as: UInt64.self)
            target += 8
            left -= 8
        }
        while left > 0 {
            target.storeBytes(of: 0x09 as UInt8, as: UInt8.self)
            target += 1
            left -= 1
        }
        count += n
    }

    /// Writes `v` as exactly two decimal digits (`v` in 0...99).
    @inline(__always)
    private mutating func putTwoDigits(_ v: Int) {
        assert(2 <= capacity - count, "write past the reserved room")
        let pairs = Self.digitPairs.utf8Start
        start[count] = pairs[2 * v]
        start[count + 1] = pairs[2 * v + 1]
        count += 2
    }

    private static let digitPairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// Writes the decimal digits of `v` (up to 20 bytes).
    private mutating func putDecimal(_ v: UInt64) {
        var digits = 1
        var rest = v
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        var end = count + digits
        assert(end <= capacity, "write past the reserved room")
        count = end
        var value = v
        while value >= 100 {
            let pair = Int(value % 100)
            value /= 100
            end -= 2
            start[end] = Self.digitPairs.utf8Start[2 * pair]
            start[end + 1] = Self.digitPairs.utf8Start[2 * pair + 1]
        }
        if value >= 10 {
            start[end - 2] = Self.digitPairs.utf8Start[2 * Int(value)]
            start[end - 1] = Self.digitPairs.utf8Start[2 * Int(value) + 1]
        } else {
            start[end - 1] = 0x30 + UInt8(value)
        }
    }

    /// Writes the decimal digits of `v`, at least `width` of them (zero-padded on the left).
    private mutating func putDecimal(_ v: UInt64, width: Int) {
        var digits = 1
        var rest = v
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        if digits < width {
            assert(width - digits <= capacity - count, "write past the reserved room")
            (start + count).update(repeating: 0x30, count: width - digits)
            count += width - digits
        }
        putDecimal(v)
    }

    // MARK: Lines

    /// Appends `line` after `depth` tabs.
    mutating func appendLine(_ line: StaticString, depth: Int) {
        reserve(depth + line.utf8CodeUnitCount)
        putTabs(depth)
        put(line)
    }

    /// Appends one value at `depth`; a non-empty container gets its opening tag and is returned
    /// for the caller to continue with its elements.
    mutating func appendValue(_ value: PlistValue, depth: Int) throws(PlistError) -> OpenContainer? {
        switch value {
        case .string(let s):
            try appendText(s, depth: depth, open: "<string>", close: "</string>\n", what: "string")
        case .integer(let n):
            reserve(depth + 48)
            putTabs(depth)
            put("<integer>")
            if n.isNegative {
                put(UInt8(ascii: "-"))
                putDecimal(0 &- n.bits)     // the magnitude, exact even for Int64.min
            } else {
                putDecimal(n.bits)
            }
            put("</integer>\n")
        case .real(let d):
            reserve(depth + 64)
            putTabs(depth)
            put("<real>")
            putReal(d)
            put("</real>\n")
        case .bool(let b):
            appendLine(b ? "<true/>\n" : "<false/>\n", depth: depth)
        case .date(let date):
            let t = date.timeIntervalSinceReferenceDate
            guard PlistDate.isInTextRange(t) else { throw Self.unwritableDate(t) }
            reserve(depth + 64)
            putTabs(depth)
            put("<date>")
            putDate(t)
            put("</date>\n")
        case .data(let data):
            appendData(data, depth: depth)
        case .array(let elements):
            if elements.isEmpty {
                appendLine("<array/>\n", depth: depth)
            } else {
                appendLine("<array>\n", depth: depth)
                return OpenContainer(keys: nil, values: elements)
            }
        case .dictionary(let dict):
            if dict.isEmpty {
                appendLine("<dict/>\n", depth: depth)
            } else {
                appendLine("<dict>\n", depth: depth)
                return OpenContainer(keys: dict.keys, values: dict.values)
            }
        case .uid(let uid):
            appendUID(uid, depth: depth)
        }
        return nil
    }

    /// `<dict><key>CF$UID</key><integer>N</integer></dict>`, as CoreFoundation writes a UID.
    private mutating func appendUID(_ uid: UInt64, depth: Int) {
        reserve(4 * depth + 80)
        putTabs(depth)
        put("<dict>\n")
        putTabs(depth + 1)
        put("<key>CF$UID</key>\n")
        putTabs(depth + 1)
        put("<integer>")
        putDecimal(uid)
        put("</integer>\n")
        putTabs(depth)
        put("</dict>\n")
    }

    // MARK: Text

    /// Appends `open`, the escaped text and `close` after `depth` tabs.
    ///
    /// `<`, `>` and `&` become entities as in Apple's writers, CR becomes `&#13;`; characters
    /// XML 1.0 cannot carry throw. Text needing none of that is copied in one go.
    mutating func appendText(
        _ text: String, depth: Int, open: StaticString, close: StaticString, what: String
    ) throws(PlistError) {
        // Native strings lend their UTF-8 in place; others are made contiguous first.
        var refused: UInt32?
        if let result = text.utf8.withContiguousStorageIfAvailable({ putLine(utf8: $0, depth: depth, open: open, close: close) }) {
            refused = result
        } else {
            var copy = text
            refused = copy.withUTF8 { putLine(utf8: $0, depth: depth, open: open, close: close) }
        }
        if let refused {
            throw PlistError(.unencodable, "XML cannot carry the character \(Self.codePointName(refused)) in a \(what); use the binary format")
        }
    }

    /// Writes `open`, the escaped text and `close` after `depth` tabs; returns the first
    /// character XML cannot carry, or nil.
    private mutating func putLine(utf8: UnsafeBufferPointer<UInt8>, depth: Int, open: StaticString, close: StaticString) -> UInt32? {
        reserve(depth + open.utf8CodeUnitCount + utf8.count + close.utf8CodeUnitCount)
        putTabs(depth)
        put(open)
        let refused = putEscaped(utf8, reservingAlso: close.utf8CodeUnitCount)
        put(close)
        return refused
    }

    /// `U+001B` style.
    static func codePointName(_ scalar: UInt32) -> String {
        let hex = String(scalar, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.utf8.count)) + hex
    }

    /// Writes `utf8` escaped; returns the first character XML cannot carry (writing stops), or nil.
    /// Room for `utf8.count` bytes is reserved already; each escape reserves for the rest plus
    /// `trailer` bytes.
    private mutating func putEscaped(_ utf8: UnsafeBufferPointer<UInt8>, reservingAlso trailer: Int) -> UInt32? {
        guard let base = utf8.baseAddress else { return nil }
        let n = utf8.count
        var i = 0
        var runStart = 0
        while i < n {
            // Eight clean bytes at a time: the common case for settings text.
            if i &+ 8 <= n {
                if !Self.mayNeedAttention(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) {
                    i &+= 8
                    continue
                }
            } else if !Self.mayNeedAttention(Self.lastBytes(base, count: n)) {
                break   // the last bytes (fewer than 8 left) are clean too
            }
            let end = min(i &+ 8, n)
            while i < end {
                let b = base[i]
                // Above '>' only 0xEF (first byte of U+F000...U+FFFF) matters.
                if b > 0x3E && b != 0xEF {
                    i &+= 1
                    continue
                }
                let entity: StaticString
                switch b {
                case UInt8(ascii: "<"): entity = "&lt;"
                case UInt8(ascii: ">"): entity = "&gt;"
                case UInt8(ascii: "&"): entity = "&amp;"
                case 0x0D: entity = "&#13;"
                case 0x09, 0x0A, 0x20...0x3E:
                    i &+= 1
                    continue
                case 0xEF:
                    // U+FFFE and U+FFFF are EF BF BE and EF BF BF; the string is valid UTF-8.
                    if i &+ 2 < n, base[i &+ 1] == 0xBF, base[i &+ 2] >= 0xBE {
                        return 0xFFFE + UInt32(base[i &+ 2] - 0xBE)
                    }
                    i &+= 1
                    continue
                default:
                    return UInt32(b)   // a control character
                }
                reserve(n - runStart + 5 + trailer)
                put(base + runStart, count: i - runStart)
                put(entity)
                i &+= 1
                runStart = i
            }
        }
        put(base + runStart, count: n - runStart)
        return nil
    }

    /// A word holding the last bytes of a text (some twice, or padded with `A`), for a
    /// clean/unclean check of a tail shorter than eight bytes without reading past the end.
    @inline(__always)
    private static func lastBytes(_ base: UnsafePointer<UInt8>, count n: Int) -> UInt64 {
        let raw = UnsafeRawPointer(base)
        if n >= 8 { return raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) }
        if n >= 4 {
            return UInt64(raw.loadUnaligned(as: UInt32.self)) << 32 | UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
        }
        var word: UInt64 = 0x4141_4141_4141_4141
        for j in 0..<n { word = word << 8 | UInt64(base[j]) }
        return word
    }

    /// Whether any of the eight bytes of `w` is a control character, `<`, `>`, `&` or 0xEF.
    /// (Exact for "any": the classic zero-byte tests never miss, and never report a byte
    /// that is not there when only the existence is asked.)
    @inline(__always)
    private static func mayNeedAttention(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func anyZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let control = (w &- ones &* 0x20) & ~w & highs             // some byte < 0x20
        let ampersand = anyZeroByte(w ^ (ones &* 0x26))
        let angle = anyZeroByte((w | (ones &* 0x02)) ^ (ones &* 0x3E))   // 0x3C or 0x3E
        let ef = anyZeroByte(w ^ (ones &* 0xEF))
        return (control | ampersand | angle | ef) != 0
    }

    // MARK: Reals

    /// Writes `d` as swift-foundation does: Swift's shortest round-trip `description` without a
    /// trailing `.0`; `nan`, `+infinity`, `-infinity`. At most 25 bytes.
    private mutating func putReal(_ d: Double) {
        if d.isNaN { return put("nan") }
        if d.isInfinite { return put(d > 0 ? "+infinity" : "-infinity") }
        if d.sign == .minus { put(UInt8(ascii: "-")) }
        let m = d.magnitude
        if m == 0 { return put(UInt8(ascii: "0")) }
        if putShortFixed(m) { return }
        var text = m.description
        if text.utf8.count > 2, text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { utf8 in
            if let base = utf8.baseAddress { put(base, count: utf8.count) }
        }
    }

    /// Powers of ten that doubles hold exactly.
    private static let exactPowersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { acc, _ in acc * 10 } }

    /// Writes `m` (positive) in fixed notation with its shortest round-trip digits when that is
    /// cheap to find exactly; returns false (writing nothing) otherwise.
    ///
    /// For `m` in 1e-3 ..< 1e15 Swift's `description` is fixed notation, and its digits are the
    /// shortest: the smallest `k` for which some integer `c` has `c / 10^k` reading back as `m`.
    /// While `m × 10^k < 2^52`, such `c` are within 1 of the rounded product, `c / 10^k` is one
    /// correctly rounded division (as a parser computes it) and cannot lie exactly halfway
    /// between two doubles. Having digits at `k` implies having them at `k + 1` (append a zero),
    /// so the smallest `k` is found by bisection. Two candidates at that `k` (a tie Swift
    /// settles by closeness) fall back to `description`.
    private mutating func putShortFixed(_ m: Double) -> Bool {
        guard m >= 1e-3, m < 1e15 else { return false }
        if m == m.rounded(.towardZero) {
            putDecimal(UInt64(m))
            return true
        }
        let found: (digits: UInt64, k: Int)? = Self.exactPowersOfTen.withUnsafeBufferPointer { powers in
            var high = 0   // the largest k keeping m × 10^k below 2^52
            while high + 1 < powers.count && m * powers[high + 1] < 4_503_599_627_370_496 { high += 1 }
            guard high > 0, Self.roundTripDigits(m, scale: powers[high]).count > 0 else { return nil }
            var low = 0    // k = 0 has no digits: m is not whole
            while high - low > 1 {
                let middle = (low + high) / 2
                if Self.roundTripDigits(m, scale: powers[middle]).count > 0 { high = middle } else { low = middle }
            }
            let result = Self.roundTripDigits(m, scale: powers[high])
            return result.count == 1 ? (result.digits, high) : nil
        }
        guard let found else { return false }
        putFixed(found.digits, fractionDigits: found.k)
        return true
    }

    /// The integers `c` within 1 of `m × scale` for which `c / scale` reads back as `m`: how many,
    /// and the last one.
    @inline(__always)
    private static func roundTripDigits(_ m: Double, scale: Double) -> (count: Int, digits: UInt64) {
        let nearest = Double(UInt64(m * scale + 0.5))   // cheaper than rounded(); ±1 is searched anyway
        var count = 0
        var digits: UInt64 = 0
        var candidate = nearest - 1
        for _ in 0..<3 {
            if candidate > 0 && candidate / scale == m {
                count += 1
                digits = UInt64(candidate)
            }
            candidate += 1
        }
        return (count, digits)
    }

    /// Writes `digits × 10^-fractionDigits` as `I.F` (`0.F` below one).
    private mutating func putFixed(_ digits: UInt64, fractionDigits k: Int) {
        var scale: UInt64 = 1
        for _ in 0..<k { scale &*= 10 }
        putDecimal(digits / scale)
        put(UInt8(ascii: "."))
        putDecimal(digits % scale, width: k)
    }

    // MARK: Dates

    /// Writes `YYYY-MM-DDTHH:MM:SSZ` for seconds since 2001, floored to the second, exactly as
    /// `PlistDate.isoText(t, fraction: false)` spells it, without building a String. `t` must be
    /// in ``PlistDate/isInTextRange(_:)``.
    private mutating func putDate(_ t: Double) {
        let whole = Int64(t.rounded(.down))
        let days = whole.floorDiv(86_400)
        let secondOfDay = Int(whole.floorMod(86_400))
        let (year, month, day) = PlistDate.civil(days: days + PlistDate.referenceDay)
        if year < 0 { put(UInt8(ascii: "-")) }
        putDecimal(year.magnitude, width: 4)
        put(UInt8(ascii: "-"))
        putTwoDigits(Int(month))
        put(UInt8(ascii: "-"))
        putTwoDigits(Int(day))
        put(UInt8(ascii: "T"))
        putTwoDigits(secondOfDay / 3_600)
        put(UInt8(ascii: ":"))
        putTwoDigits(secondOfDay / 60 % 60)
        put(UInt8(ascii: ":"))
        putTwoDigits(secondOfDay % 60)
        put(UInt8(ascii: "Z"))
    }

    /// The refusal of a date that XML text cannot carry: NaN, an infinity, or beyond the years
    /// that XML readers (ours included) read. Clamping it would write another date.
    static func unwritableDate(_ t: Double) -> PlistError {
        let shown = t.isNaN ? "nan" : t.isInfinite ? (t < 0 ? "-infinity" : "+infinity") : "\(t)"
        return PlistError(.unencodable, "XML cannot carry the date \(shown) (seconds since 2001-01-01T00:00:00Z): XML dates are years -99999999 to 99999999; use the binary format")
    }

    // MARK: Data

    private static let base64Alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// `<data>`, base64 lines, `</data>`. As in CoreFoundation, the lines carry the tag's
    /// indentation but at most 8 tabs, and each tab counts 8 characters against a 76-character
    /// line: `76 - 8 × tabs` characters, that is `57 - 6 × tabs` bytes, per line.
    private mutating func appendData(_ data: Data, depth: Int) {
        let tabs = min(depth, 8)
        let bytesPerLine = 57 - 6 * tabs
        let n = data.count
        reserve(Self.dataSize(byteCount: n, depth: depth))
        putTabs(depth)
        put("<data>\n")
        data.withUnsafeBytes { raw in
            guard let bytes = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            var offset = 0
            while offset < n {
                let lineEnd = min(offset + bytesPerLine, n)
                putTabs(tabs)
                putBase64(bytes + offset, count: lineEnd - offset)
                put(UInt8(ascii: "\n"))
                offset = lineEnd
            }
        }
        putTabs(depth)
        put("</data>\n")
    }

    /// The size of a `<data>` element of `n` bytes at `depth`, tags and newlines included.
    static func dataSize(byteCount n: Int, depth: Int) -> Int {
        let tabs = min(depth, 8)
        let bytesPerLine = 57 - 6 * tabs
        let lines = n / bytesPerLine + (n % bytesPerLine == 0 ? 0 : 1)
        return 2 * depth + 15 + n / 3 * 4 + (n % 3 == 0 ? 0 : 4) + lines * (tabs + 1)
    }

    /// Writes `n` bytes as padded base64.
    private mutating func putBase64(_ bytes: UnsafePointer<UInt8>, count n: Int) {
        assert((n + 2) / 3 * 4 <= capacity - count, "write past the reserved room")
        let alphabet = Self.base64Alphabet.utf8Start
        let out = start + count
        var i = 0
        var o = 0
        while i + 3 <= n {
            let group = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out[o] = alphabet[Int(group >> 18)]
            out[o + 1] = alphabet[Int(group >> 12 & 0x3F)]
            out[o + 2] = alphabet[Int(group >> 6 & 0x3F)]
            out[o + 3] = alphabet[Int(group & 0x3F)]
            i += 3
            o += 4
        }
        if i < n {
            let second = i + 1 < n ? UInt32(bytes[i + 1]) : 0
            let group = UInt32(bytes[i]) << 16 | second << 8
            out[o] = alphabet[Int(group >> 18)]
            out[o + 1] = alphabet[Int(group >> 12 & 0x3F)]
            out[o + 2] = i + 1 < n ? alphabet[Int(group >> 6 & 0x3F)] : UInt8(ascii: "=")
            out[o + 3] = UInt8(ascii: "=")
            o += 4
        }
        count += o
    }
}
