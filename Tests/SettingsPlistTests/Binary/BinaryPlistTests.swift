import Foundation
import Testing
@testable import SettingsPlist
import SettingsTestSupport

// MARK: - Helpers

/// Reads a binary plist through the internal entry point.
private func readBinary(_ bytes: [UInt8], maximumDepth: Int = 512) throws(PlistError) -> PlistValue {
    try bytes.withUnsafeBufferPointer { buffer throws(PlistError) in
        try BinaryPlistReader.read(buffer, options: PlistReadOptions(maximumDepth: maximumDepth))
    }
}

/// The error a binary read throws, or `nil` when it succeeds.
private func readError(_ bytes: [UInt8], maximumDepth: Int = 512) -> PlistError? {
    do {
        _ = try readBinary(bytes, maximumDepth: maximumDepth)
        return nil
    } catch {
        return error
    }
}

/// Bytes from hex text; whitespace and line breaks are ignored.
private func hex(_ text: String) -> [UInt8] {
    let digits = text.unicodeScalars.compactMap { UInt8(String($0), radix: 16) }
    return stride(from: 0, to: digits.count - 1, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

/// Assembles a binary plist from raw object encodings, with every trailer field overridable so
/// that hostile files can be made.
private struct RawBPlist {
    var objects: [[UInt8]]
    var refSize = 1
    var offsetSize = 1
    var top: UInt64 = 0
    var count: UInt64?
    var tableOffset: UInt64?
    var magic = "bplist00"
    /// Replaces the computed offset of some objects.
    var offsetOverrides: [Int: UInt64] = [:]

    var bytes: [UInt8] {
        var out = Array(magic.utf8)
        var offsets: [UInt64] = []
        for object in objects {
            offsets.append(UInt64(out.count))
            out += object
        }
        for (i, o) in offsetOverrides { offsets[i] = o }
        let table = UInt64(out.count)
        for o in offsets { out += bigEndian(o, offsetSize) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
        out += bigEndian(count ?? UInt64(objects.count), 8)
        out += bigEndian(top, 8)
        out += bigEndian(tableOffset ?? table, 8)
        return out
    }
}

private func bigEndian(_ v: UInt64, _ size: Int) -> [UInt8] {
    (0..<size).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
}

/// The trailer fields of a binary plist.
private func trailer(_ bytes: [UInt8]) -> (offsetSize: Int, refSize: Int, count: UInt64, top: UInt64, table: UInt64) {
    let t = bytes.count - 32
    func be(_ at: Int) -> UInt64 { bytes[at ..< at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
    return (Int(bytes[t + 6]), Int(bytes[t + 7]), be(t + 8), be(t + 16), be(t + 24))
}

private func roundTrip(_ value: PlistValue) throws -> PlistValue {
    let bytes = try BinaryPlistWriter.write(value)
    #expect(bytes.starts(with: Array("bplist00".utf8)))
    return try readBinary(bytes)
}

// Canonical JSON expectations are read with `CanonicalJSON` (XMLPlistReaderTests.swift).

// MARK: - Corpus

/// The binary fixtures (``PlistFixtures``): every `.bplist` case with its expected outcome.
private enum BinaryCorpus {
    static let root = PlistFixtures.root

    static var available: Bool { FileManager.default.fileExists(atPath: root) }

    /// `category/name` of every binary case.
    static func cases() -> [String] {
        guard let categories = try? FileManager.default.contentsOfDirectory(atPath: root) else { return [] }
        var names: [String] = []
        for category in categories.sorted() {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(category)")) ?? []
            for file in files.sorted() where file.hasSuffix(".bplist") {
                names.append("\(category)/\(file.dropLast(".bplist".count))")
            }
        }
        return names
    }

    static func read(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }
}

@Suite("Binary plist")
struct BinaryPlistTests {
    @Test("fixture decodes as expected", arguments: BinaryCorpus.cases())
    func corpusCase(_ name: String) throws {
        let base = "\(BinaryCorpus.root)/\(name)"
        let input = try #require(BinaryCorpus.read(base + ".bplist"))
        var accepted: [PlistValue] = []
        for suffix in [".json", ".alt.json"] {
            if let json = BinaryCorpus.read(base + suffix) {
                accepted.append(try CanonicalJSON.value(from: json))
            }
        }
        let errorAccepted = FileManager.default.fileExists(atPath: base + ".error")
        let result = Result { () throws(PlistError) in try readBinary(input) }
        switch result {
        case .success(let value):
            #expect(!accepted.isEmpty, "\(name): expected an error, got \(value)")
            if !accepted.isEmpty {
                #expect(accepted.contains(value), "\(name): got \(value)")
            }
        case .failure(let error):
            #expect(errorAccepted, "\(name): unexpected error \(error)")
            guard case .offset? = error.position else {
                Issue.record("\(name): error without a byte offset: \(error)")
                return
            }
        }
    }

    @Test("the fixtures hold the binary cases this suite relies on")
    func corpusIsThere() {
        let names = BinaryCorpus.cases()
        #expect(names.contains("binary-layout/bin_66000_objects"))
        #expect(names.contains("binary-malformed/bin_cycle_via_dict"))
        #expect(names.count >= 60)
    }

    // MARK: Reading hand-made files

    @Test("a minimal file decodes")
    func minimal() throws {
        // Top object: dict {"a": 1} as objects 0 (dict), 1 ("a"), 2 (1).
        let file = hex("""
            62706c6973743030 d10102 5161 1001
            08 0b 0d
            000000000000 0101 0000000000000003 0000000000000000 000000000000000f
            """)
        #expect(try readBinary(file) == ["a": 1])
    }

    @Test("a lone UTF-16 surrogate, in a key or a value, is an error at its object: never U+FFFD, never two keys made one")
    func loneSurrogates() throws {
        // {"a\u{D800}": 1, "a\u{DC00}": 2}: both keys used to read as "a\u{FFFD}", and one value was dropped.
        let keys: [[UInt8]] = [[0xD2, 1, 2, 3, 4], [0x62, 0, 0x61, 0xD8, 0x00], [0x62, 0, 0x61, 0xDC, 0x00], [0x10, 1], [0x10, 2]]
        let keyError = try #require(readError(RawBPlist(objects: keys).bytes))
        #expect(keyError.message.contains("lone surrogate (0xD800, unit 1)"))
        #expect(keyError.position == .offset(13))
        // A value: "x", then a high surrogate with no low one after it.
        let value = try #require(readError(RawBPlist(objects: [[0x62, 0, 0x78, 0xD8, 0x3D]]).bytes))
        #expect(value.message.contains("lone surrogate (0xD83D, unit 1)"))
        #expect(value.position == .offset(8))
        // A pair is one character.
        #expect(try readBinary(RawBPlist(objects: [[0x62, 0xD8, 0x3D, 0xDE, 0x00]]).bytes) == "😀")
    }

    @Test("header bplist0? is accepted, other versions and magics are not")
    func headers() throws {
        let object: [[UInt8]] = [[0x09]]
        #expect(try readBinary(RawBPlist(objects: object, magic: "bplist01").bytes) == true)
        #expect(try readBinary(RawBPlist(objects: object, magic: "bplist0z").bytes) == true)
        #expect(readError(RawBPlist(objects: object, magic: "bplist10").bytes)?.code == .unknownFormat)
        #expect(readError(RawBPlist(objects: object, magic: "xplist00").bytes)?.code == .unknownFormat)
        #expect(readError(Array("bplist00".utf8))?.code == .unexpectedEnd)
        #expect(readError(Array("bpl".utf8)) != nil)
    }

    @Test("integers: 1/2/4 bytes unsigned, 8 signed, 16 low 64 bits unsigned, wider refused")
    func integers() throws {
        let objects: [[UInt8]] = [
            [0xA5, 1, 2, 3, 4, 5],
            [0x10, 0xFF],
            [0x11, 0xFF, 0xFF],
            [0x12, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE],
            [0x14] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8),
        ]
        let expected: PlistValue = [255, .integer(PlistInteger(UInt64(65535))), 4_294_967_295, -2, .integer(PlistInteger(UInt64.max))]
        #expect(try readBinary(RawBPlist(objects: objects).bytes) == expected)
        #expect(readError(RawBPlist(objects: [[0x15] + [UInt8](repeating: 0, count: 32)]).bytes)?.code == .corruptBinary)
        #expect(readError(RawBPlist(objects: [[0x13, 0, 0]]).bytes)?.code == .unexpectedEnd)
    }

    @Test("reals and dates: 4 and 8-byte reals, 8-byte dates only")
    func realsAndDates() throws {
        let float: [UInt8] = [0x22] + bigEndian(UInt64(Float(0.1).bitPattern), 4)
        let double: [UInt8] = [0x23] + bigEndian((-0.0 as Double).bitPattern, 8)
        let date: [UInt8] = [0x33] + bigEndian((-0.25 as Double).bitPattern, 8)
        let value = try readBinary(RawBPlist(objects: [[0xA3, 1, 2, 3], float, double, date]).bytes)
        #expect(value == [.real(Double(Float(0.1))), .real(-0.0), .date(Date(timeIntervalSinceReferenceDate: -0.25))])
        #expect(readError(RawBPlist(objects: [[0x21, 0, 0]]).bytes)?.code == .corruptBinary)
        #expect(readError(RawBPlist(objects: [[0x32, 0, 0, 0, 0]]).bytes)?.code == .corruptBinary)
    }

    @Test("markers 0x00, 0x0F and unused ones are errors at the object's offset")
    func badMarkers() {
        for marker: UInt8 in [0x00, 0x0F, 0x0C, 0x70, 0x90, 0xB0, 0xC0, 0xE0, 0xF0] {
            let error = readError(RawBPlist(objects: [[marker, 0]]).bytes)
            #expect(error?.code == .corruptBinary, "marker \(marker)")
            #expect(error?.position == .offset(8), "marker \(marker)")
        }
    }

    @Test("UIDs: any width while the value fits 32 bits")
    func uids() throws {
        #expect(try readBinary(RawBPlist(objects: [[0x80, 7]]).bytes) == .uid(7))
        #expect(try readBinary(RawBPlist(objects: [[0x83, 0xFF, 0xFF, 0xFF, 0xFF]]).bytes) == .uid(0xFFFF_FFFF))
        #expect(try readBinary(RawBPlist(objects: [[0x87, 0, 0, 0, 0, 0, 0, 1, 2]]).bytes) == .uid(0x102))
        #expect(readError(RawBPlist(objects: [[0x84, 1, 0, 0, 0, 0]]).bytes)?.code == .corruptBinary)
    }

    @Test("strings: ASCII, Latin-1 fallback, UTF-16 with pairs, empty forms; a lone surrogate is an error")
    func strings() throws {
        let objects: [[UInt8]] = [
            [0xA5, 1, 2, 3, 4, 5],
            [0x53] + Array("a\u{0}b".utf8),
            [0x52, 0x63, 0xE9],                         // Latin-1 "cé"
            [0x63, 0xD8, 0x3D, 0xDE, 0x00, 0x00, 0x41], // 😀A
            [0x50],
            [0x60],
        ]
        let value = try readBinary(RawBPlist(objects: objects).bytes)
        #expect(value == ["a\u{0}b", "cé", "😀A", "", ""])
        // A lone low surrogate, then B: refused (it used to read as "\u{FFFD}B").
        #expect(readError(RawBPlist(objects: [[0xA1, 1], [0x62, 0xDC, 0x00, 0x00, 0x42]]).bytes)?.code == .invalidValue)
        let long = [UInt8](repeating: 0x61, count: 300)
        #expect(try readBinary(RawBPlist(objects: [[0x5F, 0x11, 0x01, 0x2C] + long], offsetSize: 2).bytes) == .string(String(repeating: "a", count: 300)))
    }

    @Test("duplicate keys: the first value wins, at the first position")
    func duplicateKeys() throws {
        // {"k": 1, "j": 2, "k": 3} with "k" stored twice as separate objects.
        let objects: [[UInt8]] = [[0xD3, 1, 2, 3, 4, 5, 6], [0x51, 0x6B], [0x51, 0x6A], [0x51, 0x6B], [0x10, 1], [0x10, 2], [0x10, 3]]
        let value = try readBinary(RawBPlist(objects: objects).bytes)
        let dict = try #require(value.dictionaryValue)
        #expect(dict.keys == ["k", "j"])
        #expect(value == ["k": 1, "j": 2])
    }

    @Test("duplicate keys are found by text: ASCII and UTF-16 forms; lone surrogates are refused, never merged")
    func duplicateKeysByText() throws {
        // {"k": 1, u"k": 2}: one text, the first value wins.
        let same: [[UInt8]] = [[0xD2, 1, 2, 3, 4], [0x51, 0x6B], [0x61, 0x00, 0x6B], [0x10, 1], [0x10, 2]]
        #expect(try readBinary(RawBPlist(objects: same).bytes) == ["k": 1])
        // {u"\u{D800}": 3, u"\u{DBFF}": 4}: two distinct keys that used to read as one "\u{FFFD}",
        // dropping the 4. Now an error at the first key.
        let lone: [[UInt8]] = [[0xD2, 1, 2, 3, 4], [0x61, 0xD8, 0x00], [0x61, 0xDB, 0xFF], [0x10, 3], [0x10, 4]]
        let error = try #require(readError(RawBPlist(objects: lone).bytes))
        #expect(error.message.contains("lone surrogate (0xD800, unit 0)"))
        #expect(error.position == .offset(13))
    }

    @Test("dictionary keys must be strings")
    func nonStringKeys() {
        let intKey: [[UInt8]] = [[0xD1, 1, 2], [0x10, 1], [0x10, 2]]
        #expect(readError(RawBPlist(objects: intKey).bytes)?.code == .invalidKey)
        let arrayKey: [[UInt8]] = [[0xD1, 1, 2], [0xA0], [0x10, 2]]
        #expect(readError(RawBPlist(objects: arrayKey).bytes)?.code == .invalidKey)
    }

    @Test("one string referenced many times decodes to equal values")
    func sharedString() throws {
        var objects: [[UInt8]] = [[0xAF, 0x11, 0x03, 0xE8] + [UInt8](repeating: 1, count: 1000)]
        objects.append([0x5F, 0x10, 20] + Array("shared string value!".utf8))
        let value = try readBinary(RawBPlist(objects: objects, offsetSize: 2).bytes)
        let elements = try #require(value.arrayValue)
        #expect(elements.count == 1000)
        #expect(elements.allSatisfy { $0 == "shared string value!" })
    }

    // MARK: Trailer and offset table validation

    @Test("trailer fields are validated against the file size")
    func trailerValidation() {
        let objects: [[UInt8]] = [[0xA1, 1], [0x09]]
        var file = RawBPlist(objects: objects)
        #expect(readError(file.bytes) == nil)
        for (field, mutate) in [
            ("offset size 0", { (f: inout RawBPlist) in f.offsetSize = 0 }),
            ("ref size 0", { (f: inout RawBPlist) in f.refSize = 0 }),
            ("ref size 9 with 1-byte refs", { (f: inout RawBPlist) in f.refSize = 9 }),
            ("zero objects", { (f: inout RawBPlist) in f.count = 0 }),
            ("count 2^63", { (f: inout RawBPlist) in f.count = 1 << 63 }),
            ("count all ones", { (f: inout RawBPlist) in f.count = .max }),
            ("count one more", { (f: inout RawBPlist) in f.count = 3 }),
            ("top past the end", { (f: inout RawBPlist) in f.top = 2 }),
            ("top all ones", { (f: inout RawBPlist) in f.top = .max }),
            ("table at 0", { (f: inout RawBPlist) in f.tableOffset = 0 }),
            ("table past the end", { (f: inout RawBPlist) in f.tableOffset = 1 << 40 }),
            ("table all ones", { (f: inout RawBPlist) in f.tableOffset = .max }),
            ("table one early", { (f: inout RawBPlist) in f.tableOffset = 10 }),
            ("offset past the table", { (f: inout RawBPlist) in f.offsetOverrides = [1: 200] }),
            ("offset at the table", { (f: inout RawBPlist) in f.offsetOverrides = [1: 11] }),
            ("top object inside the header", { (f: inout RawBPlist) in f.offsetOverrides = [0: 3] }),
        ] {
            file = RawBPlist(objects: objects)
            mutate(&file)
            let error = readError(file.bytes)
            #expect(error != nil, "\(field)")
            if case .offset? = error?.position {} else { Issue.record("\(field): no byte offset in \(String(describing: error))") }
        }
    }

    @Test("trailing bytes after the trailer and a truncated file are errors")
    func lengthMismatch() {
        let file = RawBPlist(objects: [[0xA1, 1], [0x09]]).bytes
        #expect(readError(file + [0]) != nil)
        #expect(readError(Array(file.dropLast())) != nil)
        #expect(readError(Array(file.prefix(file.count / 2))) != nil)
    }

    @Test("reference size must be able to address every object")
    func refSizeTooSmall() throws {
        var objects: [[UInt8]] = [[0xA0]]
        objects += [[UInt8]](repeating: [0x08], count: 300)
        #expect(readError(RawBPlist(objects: objects, offsetSize: 2).bytes)?.code == .corruptBinary)
        #expect(try readBinary(RawBPlist(objects: objects, refSize: 2, offsetSize: 2).bytes) == [])
    }

    @Test("an unreferenced object may point into the header, as CoreFoundation allows")
    func unreferencedOffsetInHeader() throws {
        var file = RawBPlist(objects: [[0x09], [0x08]])
        file.offsetOverrides = [1: 2]
        #expect(try readBinary(file.bytes) == true)
    }

    @Test("offsets and references of any width, above 8 bytes by their low 64 bits (as CF)")
    func sizes() throws {
        for (offsetSize, refSize) in [(1, 1), (2, 2), (3, 3), (4, 4), (8, 8), (8, 1), (1, 8), (9, 16), (16, 9)] {
            let objects: [[UInt8]] = [[0xA2] + bigEndian(1, refSize) + bigEndian(2, refSize), [0x10, 5], [0x51, 0x78]]
            let file = RawBPlist(objects: objects, refSize: refSize, offsetSize: offsetSize)
            #expect(try readBinary(file.bytes) == [5, "x"], "offset \(offsetSize), ref \(refSize)")
        }
    }

    // MARK: Hostile input

    @Test("huge counts are refused before anything is allocated", .timeLimit(hangLimit))
    func hugeCounts() {
        let huge: [UInt8] = [0x13] + bigEndian(UInt64(Int64.max), 8)
        for marker: UInt8 in [0x4F, 0x5F, 0x6F, 0xAF, 0xDF] {
            let error = readError(RawBPlist(objects: [[marker] + huge]).bytes)
            #expect(error?.code == .unexpectedEnd, "marker \(marker)")
            #expect(error?.position == .offset(8))
        }
        let negative: [UInt8] = [0x13] + bigEndian(UInt64.max, 8)
        #expect(readError(RawBPlist(objects: [[0xAF] + negative]).bytes)?.code == .corruptBinary)
        let sixteen: [UInt8] = [0x14] + [UInt8](repeating: 0xFF, count: 16)
        #expect(readError(RawBPlist(objects: [[0xDF] + sixteen]).bytes) != nil)
        // A count that fits the file only when multiplied by a 1-byte ref, not by 8.
        let objects: [[UInt8]] = [[0xA4] + [UInt8](repeating: 0, count: 12)]
        #expect(readError(RawBPlist(objects: objects, refSize: 8).bytes)?.code == .unexpectedEnd)
        // Extended count whose integer is missing, or is not an integer.
        #expect(readError(RawBPlist(objects: [[0x5F]]).bytes) != nil)
        #expect(readError(RawBPlist(objects: [[0x5F, 0x51, 0x61]]).bytes)?.code == .corruptBinary)
    }

    @Test("references past the object count are refused")
    func badReference() {
        let error = readError(RawBPlist(objects: [[0xA1, 9], [0x09]]).bytes)
        #expect(error?.code == .corruptBinary)
        #expect(error?.position == .offset(9))
    }

    @Test("containers that contain themselves are cycles", .timeLimit(hangLimit))
    func cycles() {
        #expect(readError(RawBPlist(objects: [[0xA1, 0]]).bytes)?.code == .cycle)
        // dict -> array -> dict
        let viaDict: [[UInt8]] = [[0xD1, 1, 2], [0x51, 0x6B], [0xA1, 0]]
        #expect(readError(RawBPlist(objects: viaDict).bytes)?.code == .cycle)
        // A long ring of arrays, each referring to the next.
        let ring = (0..<300).map { i -> [UInt8] in [0xA1] + bigEndian(UInt64((i + 1) % 300), 2) }
        #expect(readError(RawBPlist(objects: ring, refSize: 2, offsetSize: 2).bytes)?.code == .cycle)
        // Two objects at the same offset refer to each other.
        var alias = RawBPlist(objects: [[0xA1, 1], [0x09]])
        alias.offsetOverrides = [1: 8]
        #expect(readError(alias.bytes) != nil)
    }

    @Test("a DAG of shared containers is refused as too large, in linear time", .timeLimit(hangLimit))
    func sharedContainers() throws {
        // Array i holds array i+1 twice: 61 objects standing for 2^61 - 1 values.
        var objects = (0..<60).map { i -> [UInt8] in [0xA2, UInt8(i + 1), UInt8(i + 1)] }
        objects.append([0x10, 42])
        let error = try #require(readError(RawBPlist(objects: objects).bytes))
        #expect(error.code == .tooLarge)
    }

    /// A DAG of `levels` dictionaries, each with keys `a` and `b` both referring to the next
    /// dictionary, ending in the integer 42: `levels` = 40 gives the 296-byte file of issue 11.
    private static func dictionaryDAG(levels: Int) -> [UInt8] {
        // Objects: 0 = "a", 1 = "b", 2 ..< 2 + levels = the dictionaries, then the leaf.
        var objects: [[UInt8]] = [[0x51, 0x61], [0x51, 0x62]]
        for level in 0 ..< levels {
            let next = UInt8(3 + level)
            objects.append([0xD2, 0, 1, next, next])
        }
        objects.append([0x10, 42])
        return RawBPlist(objects: objects, top: 2).bytes
    }

    /// `levels` nested two-entry dictionaries around 42, built without sharing.
    private static func expandedDAG(levels: Int) -> PlistValue {
        var value: PlistValue = 42
        for _ in 0 ..< levels { value = ["a": value, "b": value] }
        return value
    }

    @Test("issue 11: a 40-level dictionary DAG is refused with its offset and sizes, not expanded", .timeLimit(hangLimit))
    func fortyLevelDAG() throws {
        let file = Self.dictionaryDAG(levels: 40)
        #expect(file.count < 300)
        let error = try #require(readError(file))  // expanded, it would be 2^40 values: the time limit catches that
        #expect(error.code == .tooLarge)
        #expect(error.message.contains("binary plist of \(file.count) bytes"))
        #expect(error.message.contains("\(BinaryPlistDecoder.expansionLimit(forFileSize: file.count)) bytes"))
        guard case .offset(let offset)? = error.position else {
            Issue.record("no byte offset in \(error)")
            return
        }
        #expect(offset >= BinaryPlistLayout.headerSize && offset < file.count - BinaryPlistLayout.trailerSize)
        // Every entry point refuses it, so no caller ever holds the exponential value.
        #expect(throws: PlistError.self) { try PlistValue(decoding: file) }
        #expect(throws: PlistError.self) { try PlistDecoder().decode([String: Int].self, from: Data(file)) }
    }

    @Test("shared containers within the limit decode to the expanded tree, which every operation handles")
    func sharedWithinLimit() throws {
        let file = Self.dictionaryDAG(levels: 12)  // 4,096 leaves: about 8,000 values
        let value = try readBinary(file)
        let expected = Self.expandedDAG(levels: 12)
        #expect(value == expected)
        #expect(value.hashValue == expected.hashValue)
        #expect(try readBinary(BinaryPlistWriter.write(value)) == expected)
        #expect(try PlistValue(decoding: XMLPlistWriter.write(value)) == expected)
    }

    @Test("the writer never writes a file the reader refuses: heavy sharing is written out in full")
    func writerStaysWithinExpansionLimit() throws {
        let record = PlistValue.dictionary(PlistDictionary((0 ..< 200).map { ("key\($0)", .string("value number \($0)")) }))
        let value = PlistValue.array(Array(repeating: record, count: 300))  // one record in memory
        let limit = { (fileSize: Int) in 32 * fileSize }
        var shared = BinaryPlistFlattener(sharing: true)
        _ = try shared.add(value)
        let sharedFile = shared.finish()
        let refused = sharedFile.withUnsafeBufferPointer { buffer in
            Result { () throws(PlistError) in try BinaryPlistReader.read(buffer, options: .init(), expansionLimit: limit(buffer.count)) }
        }
        if case .failure(let error) = refused {
            #expect(error.code == .tooLarge)
        } else {
            Issue.record("the shared file was read despite the limit")
        }
        let file = try BinaryPlistWriter.write(value, expansionLimit: limit)
        #expect(file.count > 20 * sharedFile.count)
        let back = try file.withUnsafeBufferPointer { buffer throws(PlistError) in
            try BinaryPlistReader.read(buffer, options: .init(), expansionLimit: limit(buffer.count))
        }
        #expect(back == value)
        // With the real limit (at least 16 MiB) the same value stays shared.
        #expect(try BinaryPlistWriter.write(value) == sharedFile)
    }

    @Test("the expansion limit: 32 times the file, at least 16 MiB, counted per reference")
    func expansionLimit() throws {
        #expect(BinaryPlistDecoder.expansionLimit(forFileSize: 300) == 16 << 20)
        #expect(BinaryPlistDecoder.expansionLimit(forFileSize: 1 << 20) == 32 << 20)
        #expect(BinaryPlistDecoder.expansionLimit(forFileSize: Int.max) > 0)
        // One 1 MiB string referred to 20 times fits (20 MiB < 32 MiB); 40 times does not.
        func repeated(_ times: Int) -> [UInt8] {
            let text = [UInt8](repeating: 0x61, count: 1 << 20)
            let string: [UInt8] = [0x5F, 0x12] + bigEndian(UInt64(text.count), 4) + text
            let array: [UInt8] = [0xAF, 0x10, UInt8(times)] + [UInt8](repeating: 1, count: times)
            return RawBPlist(objects: [array, string], offsetSize: 4).bytes
        }
        #expect(try readBinary(repeated(20)).arrayValue?.count == 20)
        #expect(readError(repeated(40))?.code == .tooLarge)
        // Files that share only keys and scalars, as every writer makes them, stay far below it.
        let records = PlistValue.array((0 ..< 20_000).map { _ in
            ["AVeryLongDescriptiveKeyNameForTheRecord": 1, "AnotherLongKeyNameThatRepeatsEverywhere": true]
        })
        #expect(try readBinary(BinaryPlistWriter.write(records)) == records)
    }

    @Test("nesting deeper than the limit is refused quickly", .timeLimit(hangLimit))
    func deepChain() {
        let depth = 100_000
        let objects = (0..<depth).map { i -> [UInt8] in
            i == depth - 1 ? [0xA0] : [0xA1] + bigEndian(UInt64(i + 1), 4)
        }
        let error = readError(RawBPlist(objects: objects, refSize: 4, offsetSize: 4).bytes)
        #expect(error?.code == .tooDeep)
    }

    @Test("maximumDepth bounds nesting exactly")
    func depthOption() throws {
        // [[[]]]: three containers deep.
        let file = RawBPlist(objects: [[0xA1, 1], [0xA1, 2], [0xA0]]).bytes
        #expect(try readBinary(file, maximumDepth: 3) == [[[]]])
        #expect(readError(file, maximumDepth: 2)?.code == .tooDeep)
        #expect(try readBinary(RawBPlist(objects: [[0x09]]).bytes, maximumDepth: 0) == true)
    }

    @Test("truncating or flipping bytes of a valid file never crashes", .timeLimit(hangLimit))
    func mutations() throws {
        let value: PlistValue = ["name": "Ada", "list": [1, 2.5, true, "é😀"], "nested": ["d": .data(Data([1, 2, 3]))], "uid": .uid(9)]
        let file = try BinaryPlistWriter.write(value)
        for cut in 0 ..< file.count {
            #expect(readError(Array(file.prefix(cut))) != nil)
        }
        var decoded = 0
        for i in 8 ..< file.count {
            for flip: UInt8 in [0x01, 0x0F, 0x80, 0xFF] {
                var mutated = file
                mutated[i] ^= flip
                if readError(mutated) == nil { decoded += 1 }
            }
        }
        #expect(decoded > 0)
    }

    // MARK: Writing

    @Test("scalar round trips, including the extremes")
    func scalarRoundTrips() throws {
        let values: [PlistValue] = [
            .integer(PlistInteger(Int64.min)), .integer(PlistInteger(Int64.max)), .integer(PlistInteger(UInt64.max)),
            .integer(PlistInteger(UInt64(Int64.max) + 1)), 0, -1, 255, 256, 65535, 65536, 4_294_967_295, 4_294_967_296,
            .real(-0.0), .real(0.0), .real(.nan), .real(.infinity), .real(-.infinity), .real(.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude),
            .date(Date(timeIntervalSinceReferenceDate: 0.5)), .date(Date(timeIntervalSinceReferenceDate: -0.25)),
            .date(Date(timeIntervalSinceReferenceDate: 600_000_000.123456)), .date(Date(timeIntervalSinceReferenceDate: -63_114_076_800)),
            "", "ascii", "é", "😀 emoji 👩‍👩‍👧", "a\u{0}b", .string(String(repeating: "x", count: 15)), .string(String(repeating: "é", count: 300)),
            "e\u{301}", .data(Data()), .data(Data([0, 1, 2])), .data(Data(repeating: 7, count: 100_000)),
            .uid(0), .uid(255), .uid(256), .uid(65536), .uid(0xFFFF_FFFF), true, false,
        ]
        for value in values {
            let back = try roundTrip(value)
            #expect(back == value, "\(value)")
        }
        #expect(try roundTrip(.real(-0.0)).doubleValue?.sign == .minus)
    }

    @Test("container round trips: empties, nesting, key order, non-ASCII keys")
    func containerRoundTrips() throws {
        let value: PlistValue = [
            "z": [], "a": [:], "é": [[], [:], [[]]],
            "e\u{301}": "decomposed", "\u{E9}x": "composed",
            "list": [1, true, 1.0, "1", .integer(PlistInteger(UInt64.max))],
        ]
        let back = try roundTrip(value)
        #expect(back == value)
        #expect(back.dictionaryValue?.keys == ["z", "a", "é", "e\u{301}", "\u{E9}x", "list"])
        #expect(try roundTrip([]) == [])
        #expect(try roundTrip([:]) == [:])
    }

    @Test("70,000 objects use 4-byte references and read back")
    func manyObjects() throws {
        let value = PlistValue.array((0..<70_000).map { .integer(PlistInteger(Int64($0) * 7 - 1000)) })
        let bytes = try BinaryPlistWriter.write(value)
        let t = trailer(bytes)
        #expect(t.count == 70_001)
        #expect(t.refSize == 4)
        #expect(t.top == 0)
        #expect(try readBinary(bytes) == value)
    }

    @Test("equal values are written once; exact equality keeps 1, true, 1.0 and 0.0, -0.0 apart")
    func uniquing() throws {
        let value: PlistValue = [1, true, 1.0, 1, true, 1.0, 0.0, -0.0, "s", "s", ["s"], ["s"], [:], [:]]
        let bytes = try BinaryPlistWriter.write(value)
        // top, 1, true, 1.0, 0.0, -0.0, "s", ["s"], [:]
        #expect(trailer(bytes).count == 9)
        #expect(try readBinary(bytes) == value)
        // Canonically equivalent but different strings stay two objects.
        let keys = try BinaryPlistWriter.write(["\u{E9}", "e\u{301}"])
        #expect(trailer(keys).count == 3)
    }

    @Test("shared subtrees are written once and read back shared")
    func sharedSubtrees() throws {
        let shared: PlistValue = ["host": "example.com", "ports": [80, 443]]
        let value: PlistValue = ["a": shared, "b": shared, "c": [shared, shared]]
        let bytes = try BinaryPlistWriter.write(value)
        // top, 4 keys+strings, dict, "example.com", [80, 443], 80, 443, "host", "ports", array c
        #expect(trailer(bytes).count == 12)
        #expect(try readBinary(bytes) == value)
    }

    @Test("unshared bytes write strings, data and containers at each occurrence, and read back the same")
    func unsharedBytes() throws {
        let shared: PlistValue = ["host": "example.com", "blob": .data(Data(repeating: 7, count: 300)), "port": 8080, "on": true]
        let value: PlistValue = ["a": shared, "b": shared, "c": [shared, shared]]
        let bytes = try value.unsharedBinaryBytes()
        // top, "a" "b" "c", array c, and per occurrence of shared: the dictionary, its 4 keys
        // and its 4 values, scalars too (4 occurrences).
        #expect(trailer(bytes).count == 1 + 3 + 1 + 4 * 9)
        #expect(bytes.count > 4 * 300)
        #expect(try readBinary(bytes) == value)
        #expect(try PlistValue(decoding: Data(bytes)) == value)
        #expect(try value.unsharedBinaryBytes(reservingCapacity: 2000) == bytes)  // a capacity changes nothing written
        #expect(trailer(try BinaryPlistWriter.write(value)).count == 14)
    }

    @Test("integer and UID widths are the smallest that read back, ASCII strings use 0x5_")
    func encodings() throws {
        func body(_ value: PlistValue) throws -> [UInt8] {
            let bytes = try BinaryPlistWriter.write(value)
            return Array(bytes[8 ..< Int(trailer(bytes).table)])
        }
        #expect(try body(255) == [0x10, 0xFF])
        #expect(try body(256) == [0x11, 0x01, 0x00])
        #expect(try body(65536) == [0x12, 0, 1, 0, 0])
        #expect(try body(4_294_967_296) == [0x13, 0, 0, 0, 1, 0, 0, 0, 0])
        #expect(try body(-1) == [0x13] + [UInt8](repeating: 0xFF, count: 8))
        #expect(try body(.integer(PlistInteger(UInt64.max))) == [0x14] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8))
        #expect(try body(1.5) == [0x23, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0])
        #expect(try body(.uid(300)) == [0x81, 0x01, 0x2C])
        #expect(try body("") == [0x50])
        #expect(try body("ab") == [0x52, 0x61, 0x62])
        #expect(try body("é") == [0x61, 0x00, 0xE9])
        #expect(try body("😀") == [0x62, 0xD8, 0x3D, 0xDE, 0x00])
        #expect(try body(true) == [0x09])
        let file = try BinaryPlistWriter.write(["k": 1])
        let t = trailer(file)
        #expect((t.offsetSize, t.refSize, t.count, t.top) == (1, 1, 3, 0))
    }

    @Test("UIDs above 32 bits are refused: no binary reader accepts them")
    func wideUID() {
        #expect(throws: PlistError.self) { try BinaryPlistWriter.write(.uid(1 << 32)) }
    }

    @Test("offset and reference widths grow at 256 and 65,536")
    func widthThresholds() {
        #expect(BinaryPlistFlattener.width(for: 255) == 1)
        #expect(BinaryPlistFlattener.width(for: 256) == 2)
        #expect(BinaryPlistFlattener.width(for: 65_535) == 2)
        #expect(BinaryPlistFlattener.width(for: 65_536) == 4)
        #expect(BinaryPlistFlattener.width(for: 1 << 32) == 8)
    }
}
