#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import SettingsPlist

// MARK: - Helpers

/// Reads an XML plist from text (UTF-8).
private func xml(_ text: String, maximumDepth: Int = 512) throws(PlistError) -> PlistValue {
    try xml(Array(text.utf8), maximumDepth: maximumDepth)
}

/// Reads an XML plist from raw bytes.
private func xml(_ bytes: [UInt8], maximumDepth: Int = 512) throws(PlistError) -> PlistValue {
    try bytes.withUnsafeBufferPointer { (buffer) throws(PlistError) -> PlistValue in
        try XMLPlistReader.read(buffer, options: PlistReadOptions(maximumDepth: maximumDepth))
    }
}

/// A document with `body` inside `<plist>`, the usual header in front.
private func doc(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    \(body)
    </plist>
    """
}

/// The error `body` (inside `<plist>`) throws, or `nil` when it reads.
private func failure(_ text: String) -> PlistError? {
    do {
        _ = try xml(text)
        return nil
    } catch {
        return error
    }
}

private func date(_ iso: String) -> PlistValue {
    .date(Date(timeIntervalSinceReferenceDate: PlistDate.parse(Array(iso.utf8), allowFraction: true) ?? .nan))
}

private func data(_ bytes: [UInt8]) -> PlistValue { .data(Data(bytes)) }

// MARK: - Corpus

/// The XML fixtures (``PlistFixtures``), with their expected outcomes.
@Suite("XML reader: fixtures")
struct XMLReaderCorpusTests {
    static let corpus = PlistFixtures.root

    /// Every non-binary input file of the fixtures, as `category/file`.
    static let cases: [String] = {
        var out: [String] = []
        let categories = (try? FileManager.default.contentsOfDirectory(atPath: corpus)) ?? []
        for category in categories.sorted() {
            let dir = "\(corpus)/\(category)"
            let files = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            for file in files.sorted() where !file.hasSuffix(".json") && !file.hasSuffix(".error") && !file.hasSuffix(".md") {
                guard let bytes = FileManager.default.contents(atPath: "\(dir)/\(file)"),
                      !bytes.starts(with: Array("bplist".utf8)) else { continue }
                out.append("\(category)/\(file)")
            }
        }
        return out
    }()

    @Test("the fixtures are present and have XML cases")
    func corpusPresent() {
        #expect(Self.cases.count > 90)
        #expect(Self.cases.contains("xml-malformed/unclosed_dict.plist"))
    }

    @Test("each case reads as expected", arguments: cases)
    func corpusCase(_ name: String) throws {
        let path = "\(Self.corpus)/\(name)"
        let stem = String(path[..<(path.lastIndex(of: ".") ?? path.endIndex)])
        let input = try #require(FileManager.default.contents(atPath: path))
        let fm = FileManager.default
        let errorAllowed = fm.fileExists(atPath: stem + ".error")
        var expected: [PlistValue] = []
        for suffix in [".json", ".alt.json"] {
            if let json = fm.contents(atPath: stem + suffix) {
                expected.append(try CanonicalJSON.value(from: Array(json)))
            }
        }
        #expect(errorAllowed || !expected.isEmpty, "case has no expected outcome")
        do {
            let value = try xml(Array(input))
            #expect(expected.contains(value), "\(name): read \(value), expected \(expected.map(\.description))")
        } catch {
            #expect(errorAllowed, "\(name): unexpected error \(error)")
            if case .line(let line, let column)? = error.position {
                #expect(line >= 1 && column >= 1)
            } else {
                Issue.record("\(name): error without a line and column: \(error)")
            }
        }
    }
}

/// Canonical typed JSON (`{"int": 1}`, `{"dict": [["k", {...}]]}`...) as a `PlistValue`.
enum CanonicalJSON {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    indirect enum JSON {
        case object([(String, JSON)]), array([JSON]), string(String), number(String), bool(Bool), null
    }

    static func value(from bytes: [UInt8]) throws -> PlistValue {
        var parser = Parser(bytes: bytes)
        return try typed(parser.parse())
    }

    static func typed(_ json: JSON) throws -> PlistValue {
        guard case .object(let fields) = json, fields.count == 1 else { throw Failure(description: "not a typed value") }
        let (type, payload) = fields[0]
        switch (type, payload) {
        case ("int", .number(let text)):
            if let v = Int64(text) { return .integer(PlistInteger(v)) }
            if let v = UInt64(text) { return .integer(PlistInteger(v)) }
        case ("real", .number(let text)):
            if let v = Double(text) { return .real(v) }
        case ("real", .string(let text)):
            switch text {
            case "nan": return .real(.nan)
            case "inf": return .real(.infinity)
            case "-inf": return .real(-.infinity)
            default: break
            }
        case ("bool", .bool(let b)): return .bool(b)
        case ("string", .string(let s)): return .string(s)
        case ("date", .string(let s)):
            if let t = PlistDate.parse(Array(s.utf8), allowFraction: true) { return .date(Date(timeIntervalSinceReferenceDate: t)) }
        case ("data", .string(let s)):
            if let d = Data(base64Encoded: s) { return .data(d) }
        case ("uid", .number(let text)):
            if let v = UInt64(text) { return .uid(v) }
        case ("array", .array(let items)):
            return .array(try items.map(typed))
        case ("dict", .array(let pairs)):
            var dict = PlistDictionary()
            for pair in pairs {
                guard case .array(let kv) = pair, kv.count == 2, case .string(let k) = kv[0] else { break }
                dict.append(k, try typed(kv[1]))
            }
            if dict.count == pairs.count { return .dictionary(dict) }
        default: break
        }
        throw Failure(description: "bad typed value \(type)")
    }

    /// A small JSON parser that keeps numbers as text (exact integers and doubles).
    struct Parser {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func parse() throws -> JSON {
            skip()
            guard i < bytes.count else { throw Failure(description: "end of JSON") }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var fields: [(String, JSON)] = []
                skip()
                if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(fields) }
                while true {
                    skip()
                    guard case .string(let key) = try parse() else { throw Failure(description: "key") }
                    skip(); i += 1 // ':'
                    fields.append((key, try parse()))
                    skip()
                    let c = bytes[i]; i += 1
                    if c == UInt8(ascii: "}") { return .object(fields) }
                }
            case UInt8(ascii: "["):
                i += 1
                var items: [JSON] = []
                skip()
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                while true {
                    items.append(try parse())
                    skip()
                    let c = bytes[i]; i += 1
                    if c == UInt8(ascii: "]") { return .array(items) }
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): i += 4; return .bool(true)
            case UInt8(ascii: "f"): i += 5; return .bool(false)
            case UInt8(ascii: "n"): i += 4; return .null
            default:
                let start = i
                while i < bytes.count, "+-.eE0123456789".utf8.contains(bytes[i]) { i += 1 }
                return .number(String(decoding: bytes[start ..< i], as: UTF8.self))
            }
        }

        mutating func skip() {
            while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 }
        }

        mutating func string() throws -> String {
            i += 1
            var units: [UInt16] = []
            while bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == UInt8(ascii: "\\") {
                    let e = bytes[i + 1]
                    i += 2
                    switch e {
                    case UInt8(ascii: "n"): units.append(10)
                    case UInt8(ascii: "t"): units.append(9)
                    case UInt8(ascii: "r"): units.append(13)
                    case UInt8(ascii: "b"): units.append(8)
                    case UInt8(ascii: "f"): units.append(12)
                    case UInt8(ascii: "u"):
                        let hex = String(decoding: bytes[i ..< i + 4], as: UTF8.self)
                        units.append(UInt16(hex, radix: 16) ?? 0xFFFD)
                        i += 4
                    default: units.append(UInt16(e))
                    }
                } else {
                    // Raw UTF-8: decode one scalar.
                    var end = i + 1
                    while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
                    units.append(contentsOf: String(decoding: bytes[i ..< end], as: UTF8.self).utf16)
                    i = end
                }
            }
            i += 1
            return String(decoding: units, as: UTF16.self)
        }
    }
}

// MARK: - Document structure

@Suite("XML reader: document structure")
struct XMLReaderStructureTests {
    @Test("a bare root element without <plist>")
    func bareRoot() throws {
        #expect(try xml("<dict><key>a</key><true/></dict>") == ["a": true])
        #expect(try xml("  \n<string>x</string>") == "x")
    }

    @Test("declaration, DOCTYPE, comments and processing instructions before the root")
    func prolog() throws {
        let text = """
        <?xml version="1.0"?>
        <!-- one --><?pi data?>
        <!DOCTYPE plist SYSTEM "file://localhost/System/Library/DTDs/PropertyList.dtd">
        <!-- two -->
        <plist><integer>1</integer></plist>
        """
        #expect(try xml(text) == 1)
    }

    @Test("a DOCTYPE with an internal subset is refused, as CoreFoundation does")
    func doctypeSubset() {
        let e = failure("<!DOCTYPE plist [ <!ENTITY x \"y\"> ]><plist><string/></plist>")
        #expect(e?.code == .syntax)
        #expect(failure("<!DOCTYPX plist><plist><true/></plist>")?.code == .syntax)
    }

    @Test("comments and processing instructions between elements, anywhere inside")
    func commentsInside() throws {
        let text = doc("<dict><!--c--><key>a</key><!--c--><?pi?><array><?x y?><!-- --><false/><!--c--></array><!--c--></dict>")
        #expect(try xml(text) == ["a": [false]])
        // Inside an element CF looks for `?>` from the `?`, so `<?>` is a complete instruction.
        #expect(try xml("<array><?><true/></array>") == [true])
    }

    @Test("anything after the root element is ignored")
    func trailingGarbage() throws {
        #expect(try xml(doc("<true/>") + "garbage <unclosed") == true)
        #expect(try xml("<string>a</string><string>b</string>") == "a")
    }

    @Test("two values in <plist> are an error")
    func twoRoots() {
        #expect(failure(doc("<true/><false/>"))?.code == .syntax)
    }

    @Test("empty documents and an empty <plist> are errors")
    func empty() {
        #expect(failure("")?.code == .unknownFormat)
        #expect(failure(" \n\t ")?.code == .unknownFormat)
        #expect(failure("<?xml version=\"1.0\"?>")?.code == .unknownFormat)
        #expect(failure(doc(""))?.code == .syntax)
        #expect(failure("<plist/>")?.code == .syntax)
        #expect(failure("{\"json\": true}")?.code == .unknownFormat)
    }

    @Test("unknown elements, stray text and malformed tags are errors")
    func unknownAndStray() {
        #expect(failure(doc("<array><foo/></array>"))?.code == .unknownElement)
        #expect(failure(doc("<String>x</String>"))?.code == .unknownElement)
        #expect(failure(doc("<array>text<true/></array>"))?.code == .syntax)
        #expect(failure(doc("<array><![CDATA[x]]></array>"))?.code == .syntax)
        #expect(failure(doc("< array/>"))?.code == .syntax)
        #expect(failure(doc("<array><true/></dict>"))?.code == .syntax)
        #expect(failure(doc("<array><true/>"))?.code == .syntax)
        #expect(failure("<plist><array><true/>\n")?.code == .unexpectedEnd)
    }

    @Test("attributes are ignored; whitespace is allowed before '/>' and in end tags")
    func attributes() throws {
        #expect(try xml(doc("<array a=\"1\" b='2'><true /><string\tx=\"y\">s</string ><dict\n/></array\r\n>")) == [true, "s", [:]])
    }

    @Test("<key> outside a dictionary, and as a dictionary value, is a string")
    func keyAsString() throws {
        #expect(try xml(doc("<array><key>k</key><key/></array>")) == ["k", ""])
        #expect(try xml(doc("<dict><key>a</key><key>b</key></dict>")) == ["a": "b"])
    }

    @Test("a <plist> element may appear inside a container")
    func nestedPlist() throws {
        #expect(try xml("<array><plist><integer>2</integer></plist></array>") == [2])
    }

    @Test("dictionary keys must come first, and every key needs a value")
    func dictionaryShape() {
        #expect(failure(doc("<dict><string>x</string></dict>"))?.code == .syntax)
        #expect(failure(doc("<dict><key>a</key></dict>"))?.code == .syntax)
        #expect(failure(doc("<dict><key>a</key><true/><array/></dict>"))?.code == .syntax)
    }

    @Test("a repeated key keeps its first position and its last value")
    func duplicateKeys() throws {
        let value = try xml(doc("<dict><key>a</key><integer>1</integer><key>b</key><integer>2</integer><key>a</key><integer>3</integer></dict>"))
        let dict = try #require(value.dictionaryValue)
        #expect(dict.keys == ["a", "b"])
        #expect(dict["a"] == 3)
        #expect(dict["b"] == 2)
    }

    @Test("large dictionaries keep file order and answer lookups")
    func largeDictionary() throws {
        var body = "<dict>"
        for i in 0 ..< 300 { body += "<key>k\((i * 7919) % 300)</key><integer>\(i)</integer>" }
        body += "<key>k5</key><string>last</string></dict>"
        let dict = try #require(try xml(body).dictionaryValue)
        #expect(dict.count == 300)
        #expect(dict.keys.first == "k0")
        #expect(dict.keys[1] == "k119")
        #expect(dict["k119"] == 1)
        #expect(dict["k5"] == "last")
        #expect(dict.firstIndex(of: "k5") == dict.keys.firstIndex(of: "k5"))
        #expect(dict["missing"] == nil)
    }

    @Test("keys are compared by code points, not canonical equivalence")
    func codePointKeys() throws {
        let dict = try #require(try xml("<dict><key>\u{E9}</key><true/><key>e\u{301}</key><false/></dict>").dictionaryValue)
        #expect(dict.count == 2)
    }

    @Test("a CF$UID dictionary becomes a UID, with CoreFoundation's 32-bit conversion")
    func uid() throws {
        #expect(try xml("<dict><key>CF$UID</key><integer>7</integer></dict>") == .uid(7))
        #expect(try xml("<dict><key>CF$UID</key><integer>4294967295</integer></dict>") == .uid(4_294_967_295))
        #expect(try xml("<dict><key>CF$UID</key><integer>4294967296</integer></dict>") == .uid(0))
        #expect(try xml("<dict><key>CF$UID</key><integer>-1</integer></dict>") == .uid(4_294_967_295))
        #expect(try xml("<dict><key>CF$UID</key><real>3.9</real></dict>") == .uid(3))
        #expect(try xml("<dict><key>CF$UID</key><integer>1</integer><key>CF$UID</key><integer>2</integer></dict>") == .uid(2))
        #expect(try xml("<dict><key>CF$UID</key><string>1</string></dict>") == ["CF$UID": "1"])
        #expect(try xml("<dict><key>CF$UID</key><integer>1</integer><key>x</key><true/></dict>") == ["CF$UID": 1, "x": true])
        #expect(try xml("<dict><key>CF$UID</key><real>1e300</real></dict>") == ["CF$UID": .real(1e300)])
    }

    @Test("nesting up to the limit reads; one more level is an error")
    func depth() throws {
        func nested(_ n: Int) -> String {
            String(repeating: "<array>", count: n) + "<true/>" + String(repeating: "</array>", count: n)
        }
        #expect(try xml(nested(512)).arrayValue != nil)
        #expect(failure(nested(513))?.code == .tooDeep)
        #expect(try xml(nested(3), maximumDepth: 3) == [[[true]]])
        #expect(throws: PlistError.self) { try xml(nested(4), maximumDepth: 3) }
        // An empty container's content is never read, so it does not count (as in CoreFoundation).
        #expect(try xml("<array><array/></array>", maximumDepth: 1) == [[]])
        // Very deep input fails cleanly, without exhausting the stack.
        #expect(failure(nested(200_000))?.code == .tooDeep)
    }

    @Test("deeply nested <plist> elements do not exhaust the stack")
    func deepPlist() {
        let n = 100_000
        let text = String(repeating: "<plist>", count: n) + "<true/>" + String(repeating: "</plist>", count: n)
        #expect((try? xml(text)) == true)
    }
}

// MARK: - Strings

@Suite("XML reader: strings")
struct XMLReaderStringTests {
    @Test("empty forms")
    func emptyForms() throws {
        #expect(try xml(doc("<array><string/><string></string><key/><true></true><false></false><dict></dict><array></array></array>"))
            == ["", "", "", true, false, [:], []])
    }

    @Test("the five predefined entities and character references")
    func entities() throws {
        #expect(try xml(doc("<string>&lt;&gt;&amp;&apos;&quot;</string>")) == "<>&'\"")
        #expect(try xml(doc("<string>&#65;&#x42;&#x1F600;&#00000067;&#xFFFFF;</string>")) == "AB\u{1F600}C\u{FFFFF}")
        #expect(try xml(doc("<string>a&#0;b</string>")) == "a\u{0}b")
    }

    @Test("bad references are errors", arguments: [
        "&nbsp;", "&AMP;", "&#X41;", "&#xD800;", "&#xDFFF;", "&#1114112;", "&#x110000;",
        "&#000000065;", "&#12a;", "&#xG;", "&amp", "&lt", "&",
    ])
    func badEntities(_ reference: String) {
        let e = failure(doc("<string>\(reference)</string>"))
        #expect(e != nil)
        #expect(e?.code == .invalidValue || e?.code == .unexpectedEnd || e?.code == .syntax)
    }

    @Test("CDATA sections, alone or mixed with text and entities")
    func cdata() throws {
        #expect(try xml(doc("<string><![CDATA[<a> & ]]]]><![CDATA[>]]></string>")) == "<a> & ]]>")
        #expect(try xml(doc("<string>x&amp;<![CDATA[&amp;]]>y</string>")) == "x&&amp;y")
        #expect(try xml(doc("<key><![CDATA[k]]></key>")) == "k")
        #expect(failure(doc("<string><![CDATA[never closed</string>"))?.code == .unexpectedEnd)
    }

    @Test("a comment inside a string is an error (only CDATA may start with <! there)")
    func commentInString() {
        #expect(failure(doc("<string>a<!-- c -->b</string>"))?.code == .syntax)
    }

    @Test("CR and CRLF are kept, raw control characters accepted, whitespace preserved")
    func lineEnds() throws {
        #expect(try xml(doc("<string>a\r\nb\rc\n\u{1}\u{0}\t </string>")) == "a\r\nb\rc\n\u{1}\u{0}\t ")
    }

    @Test("'>' may appear raw in text")
    func rawGreaterThan() throws {
        #expect(try xml(doc("<string>a > b</string>")) == "a > b")
    }

    @Test("invalid UTF-8 in a string is an error; the whole decoded text is checked")
    func invalidUTF8() throws {
        var bytes = Array(doc("<string>a\u{FFFF}</string>").utf8)
        let at = try #require(bytes.firstIndex(of: 0xEF))
        bytes.replaceSubrange(at ..< at + 3, with: [0xFF, 0xFE])
        #expect(throws: PlistError.self) { try xml(bytes) }
        // Surrogates encoded in UTF-8 and overlong forms are invalid too.
        #expect(throws: PlistError.self) { try xml(Array("<string>".utf8) + [0xED, 0xA0, 0x80] + Array("</string>".utf8)) }
        #expect(throws: PlistError.self) { try xml(Array("<string>".utf8) + [0xC0, 0xAF] + Array("</string>".utf8)) }
        // A sequence split by a CDATA section is whole again once decoded.
        let split = Array("<string>".utf8) + [0xC3] + Array("<![CDATA[".utf8) + [0xA9] + Array("]]></string>".utf8)
        #expect(try xml(split) == "\u{E9}")
        // Invalid bytes outside strings (comments, attributes) are not looked at.
        #expect(try xml(Array("<!-- ".utf8) + [0xFF] + Array(" --><true a='".utf8) + [0xFE] + Array("'/>".utf8)) == true)
    }

    @Test("long strings with non-ASCII text and escapes at every position")
    func longStrings() throws {
        let piece = "h\u{E9}llo w\u{F6}rld \u{1F600} "
        let text = String(repeating: piece, count: 50)
        #expect(try xml("<string>\(text)</string>") == .string(text))
        for i in 0 ..< 20 {
            let s = String(repeating: "x", count: i) + "&amp;" + String(repeating: "y", count: 20 - i)
            #expect(try xml("<string>\(s)</string>") == .string(String(repeating: "x", count: i) + "&" + String(repeating: "y", count: 20 - i)))
        }
    }
}

// MARK: - Numbers, dates, data

@Suite("XML reader: scalars")
struct XMLReaderScalarTests {
    private func integer(_ text: String) throws(PlistError) -> PlistValue { try xml("<integer>\(text)</integer>") }
    private func real(_ text: String) throws(PlistError) -> PlistValue { try xml("<real>\(text)</real>") }

    @Test("integer syntax: space, sign, hex, leading zeros")
    func integers() throws {
        #expect(try integer("42") == 42)
        #expect(try integer(" \t\n42") == 42)
        #expect(try integer("- 7") == -7)
        #expect(try integer("+0x1F") == 31)
        #expect(try integer("-0X10") == -16)
        #expect(try integer("0x0") == 0)
        #expect(try integer("-0") == 0)
        #expect(try integer("000") == 0)
        #expect(try integer("0x00ff") == 255)
        #expect(try integer("\u{7F}\u{1}5") == 5)            // any byte below 0x21, and 0x7F
        #expect(try integer("\u{2003}5") == 5)              // E2 80 83
        #expect(try integer("\u{3000}5") == 5)              // E3 80 80
        #expect(try integer("9223372036854775807") == .integer(PlistInteger(Int64.max)))
        #expect(try integer("-9223372036854775808") == .integer(PlistInteger(Int64.min)))
        #expect(try integer("18446744073709551615") == .integer(PlistInteger(UInt64.max)))
        #expect(try integer("0xFFFFFFFFFFFFFFFF") == .integer(PlistInteger(UInt64.max)))
        #expect(try integer("-0x8000000000000000") == .integer(PlistInteger(Int64.min)))
    }

    @Test("integer errors", arguments: ["", " ", "0x", "-", "+", "5 ", "1_000", "12abc", "ff", "1.0", "&#53;", "--1", "\u{A0}5", "5<!--c-->"])
    func integerErrors(_ text: String) {
        #expect(failure("<integer>\(text)</integer>")?.code == .invalidValue
            || failure("<integer>\(text)</integer>")?.code == .syntax)
    }

    @Test("integers outside Int64.min ... UInt64.max overflow")
    func integerOverflow() {
        #expect(failure("<integer>18446744073709551616</integer>")?.code == .integerOverflow)
        #expect(failure("<integer>-9223372036854775809</integer>")?.code == .integerOverflow)
        #expect(failure("<integer>0x10000000000000000</integer>")?.code == .integerOverflow)
        #expect(failure("<integer>99999999999999999999999999</integer>")?.code == .integerOverflow)
        #expect(failure("<integer/>")?.code == .invalidValue)
    }

    @Test("real syntax: specials in any case, C decimals, leading space")
    func reals() throws {
        #expect(try real("1.5") == 1.5)
        #expect(try real("NaN").doubleValue?.isNaN == true)
        #expect(try real("-INF") == .real(-.infinity))
        #expect(try real("+Infinity") == .real(.infinity))
        #expect(try real("inf") == .real(.infinity))
        #expect(try real("-0.0") == .real(-0.0))
        #expect(try real("  \n.5") == 0.5)
        #expect(try real("5.") == 5.0)
        #expect(try real("1E+10") == 1e10)
        #expect(try real("-2e-3") == -0.002)
        #expect(try real("1e400") == .real(.infinity))
        #expect(try real("-1e400") == .real(-.infinity))
        #expect(try real("1e-400") == .real(0))
        #expect(try real("4.9406564584124654e-324") == .real(.leastNonzeroMagnitude))
        #expect(try real("0.10000000000000001") == 0.1)
        #expect(try real("0.33333333333333331") == .real(1.0 / 3.0))
        #expect(try real("9007199254740993") == .real(9_007_199_254_740_992))
        #expect(try real("123456789012345678901234567890") == .real(1.2345678901234568e29))
        #expect(try real("&#49;.<![CDATA[5]]>") == 1.5)
        #expect(try real("\u{2003}2") == 2.0)
        #expect(try real("\u{0}3") == 3.0)
    }

    @Test("decimal conversion is correctly rounded (same as strtod) on many random inputs")
    func realRounding() {
        var state: UInt64 = 0x1234_5678_9ABC_DEF0
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var mismatches: [String] = []
        for _ in 0 ..< 50_000 {
            let digitCount = 1 + Int(next() % 20)
            var digits = ""
            for _ in 0 ..< digitCount { digits.append(Character(Unicode.Scalar(UInt8(0x30 + next() % 10)))) }
            let point = Int(next() % UInt64(digitCount + 1))
            var text = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            if next() % 3 == 0 { text += "e\(Int(next() % 41) - 20)" }
            if next() % 2 == 0 { text = "-" + text }
            guard text != "." && text != "-." && !text.hasPrefix(".e") && !text.hasPrefix("-.e") else { continue }
            let bytes = Array(text.utf8)
            let ours = bytes.withUnsafeBufferPointer { XMLPlistParser.parseReal($0) }
            let reference = Double(text)
            if ours?.bitPattern != reference?.bitPattern { mismatches.append(text) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    @Test("real errors", arguments: ["", " ", "1.5 ", "1e", "1e+", ".", "-.e1", "0x10", "+-1", "-nan", "+nan", " nan",
                                     "infinityx", "1,5", "1.5x", "\u{A0}\u{A0}x"])
    func realErrors(_ text: String) {
        #expect(failure("<real>\(text)</real>")?.code == .invalidValue)
    }

    @Test("dates: exactly YYYY-MM-DDTHH:MM:SSZ, fields rolling over")
    func dates() throws {
        #expect(try xml("<date>2001-01-01T00:00:00Z</date>") == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(try xml("<date>2000-02-29T12:34:56Z</date>") == date("2000-02-29T12:34:56Z"))
        #expect(try xml("<date>2001-13-01T00:00:00Z</date>") == date("2002-01-01T00:00:00Z"))
        #expect(try xml("<date>-0001-01-01T00:00:00Z</date>").dateValue != nil)
        #expect(try xml("<date>0001-01-01T00:00:00Z</date>") == date("0001-01-01T00:00:00Z"))
        for bad in ["", "2020-01-01T00:00:00.5Z", "2020-01-01T00:00:00", "2020-01-01 00:00:00Z", " 2020-01-01T00:00:00Z",
                    "2020-01-01T00:00:00Z ", "2020-1-01T00:00:00Z", "yesterday"] {
            #expect(failure("<date>\(bad)</date>")?.code == .invalidValue, "\(bad)")
        }
        #expect(failure("<date/>")?.code == .invalidValue)
    }

    @Test("base64 with CoreFoundation's lenient rules")
    func base64() throws {
        #expect(try xml("<data>SGVsbG8=</data>") == data(Array("Hello".utf8)))
        #expect(try xml("<data>\n\tAAEC\n\tAw==\n</data>") == data([0, 1, 2, 3]))
        #expect(try xml("<data></data>") == data([]))
        #expect(try xml("<data>AAE</data>") == data([]))                // only complete groups
        #expect(try xml("<data>AAECA</data>") == data([0, 1, 2]))
        #expect(try xml("<data>A*A!E=</data>") == data([0, 1]))        // non-alphabet ASCII skipped
        #expect(try xml("<data>AA= =</data>") == data([0]))              // space keeps counting '='
        #expect(try xml("<data>AA=*=</data>") == data([0, 0]))           // other characters reset it
        #expect(try xml("<data>====</data>") == data([0]))
        #expect(try xml("<data>AA==AAAA</data>") == data([0, 0, 0, 0]))
        #expect(try xml("<data>&;AAAA</data>") == data([0, 0, 0]))     // no entities in data: '&' is skipped
        #expect(failure("<data>AA\u{E9}E=</data>")?.code == .invalidValue)
        #expect(failure("<data>\u{E9}</data>")?.code == .invalidValue)
        #expect(failure("<data/>")?.code == .invalidValue)
        #expect(failure("<data>AAAA<![CDATA[AAAA]]></data>")?.code == .syntax)
    }

    @Test("booleans: empty, or open and closed with nothing between")
    func booleans() throws {
        #expect(try xml("<true/>") == true)
        #expect(try xml("<false></false >") == false)
        #expect(failure("<true>yes</true>")?.code == .invalidValue)
        #expect(failure("<true> </true>")?.code == .invalidValue)
        #expect(failure("<true></false>")?.code == .invalidValue)
    }
}

// MARK: - Encodings

@Suite("XML reader: encodings")
struct XMLReaderEncodingTests {
    static let body = "<plist><dict><key>k\u{E9}y</key><string>h\u{E9}llo \u{1F600}</string></dict></plist>"
    static let expected: PlistValue = ["k\u{E9}y": "h\u{E9}llo \u{1F600}"]

    private func utf16(_ text: String, bigEndian: Bool, bom: Bool = true) -> [UInt8] {
        var out: [UInt8] = bom ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []
        for u in text.utf16 {
            let hi = UInt8(u >> 8), lo = UInt8(u & 0xFF)
            out += bigEndian ? [hi, lo] : [lo, hi]
        }
        return out
    }

    private func utf32(_ text: String, bigEndian: Bool) -> [UInt8] {
        var out: [UInt8] = bigEndian ? [0, 0, 0xFE, 0xFF] : [0xFF, 0xFE, 0, 0]
        for s in text.unicodeScalars {
            let v = s.value
            let b = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
            out += bigEndian ? b : b.reversed()
        }
        return out
    }

    @Test("UTF-8, with and without a BOM")
    func utf8() throws {
        #expect(try xml(Self.body) == Self.expected)
        #expect(try xml([0xEF, 0xBB, 0xBF] + Array(Self.body.utf8)) == Self.expected)
    }

    @Test("UTF-16 and UTF-32 with a BOM, either byte order")
    func utf16and32() throws {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n" + Self.body
        #expect(try xml(utf16(text, bigEndian: false)) == Self.expected)
        #expect(try xml(utf16(text, bigEndian: true)) == Self.expected)
        #expect(try xml(utf32(Self.body, bigEndian: false)) == Self.expected)
        #expect(try xml(utf32(Self.body, bigEndian: true)) == Self.expected)
    }

    @Test("UTF-16 without a BOM loses its first character, as in CoreFoundation")
    func utf16WithoutBOM() throws {
        #expect(throws: PlistError.self) { try xml(utf16(Self.body, bigEndian: false, bom: false)) }
        #expect(try xml(utf16(" " + Self.body, bigEndian: false, bom: false)) == Self.expected)
        #expect(try xml(utf16(" " + Self.body, bigEndian: true, bom: false)) == Self.expected)
    }

    @Test("a lone surrogate in a UTF-16 string is an error")
    func loneSurrogate() {
        var bytes = utf16("<string>a", bigEndian: false)
        bytes += [0x00, 0xD8]
        bytes += utf16("</string>", bigEndian: false, bom: false)
        #expect(throws: PlistError.self) { try xml(bytes) }
    }

    @Test("declared single-byte encodings are converted first", arguments: [
        ("ISO-8859-1", [0xE9], "\u{E9}"),
        ("latin1", [0xE9, 0xA0], "\u{E9}\u{A0}"),
        ("windows-1252", [0x80, 0x93, 0x94], "\u{20AC}\u{201C}\u{201D}"),
        ("iso-8859-15", [0xA4], "\u{20AC}"),
        ("macintosh", [0x8E, 0xDB], "\u{E9}\u{20AC}"),
        ("US-ASCII", [0x41], "A"),
    ] as [(String, [UInt8], String)])
    func singleByte(_ name: String, _ encoded: [UInt8], _ decoded: String) throws {
        let bytes = Array("<?xml version=\"1.0\" encoding='\(name)'?><plist><string>".utf8) + encoded
            + Array("</string></plist>".utf8)
        #expect(try xml(bytes) == .string(decoded))
    }

    @Test("ASCII with a high byte, an unknown encoding, a cut-off declaration are errors")
    func encodingErrors() {
        let ascii = Array("<?xml version=\"1.0\" encoding=\"us-ascii\"?><string>".utf8) + [0xE9] + Array("</string>".utf8)
        #expect(throws: PlistError.self) { try xml(ascii) }
        #expect(failure("<?xml version=\"1.0\" encoding=\"klingon\"?><true/>")?.code == .unknownFormat)
        #expect(failure("<?xml version=\"1.0\" ")?.code == .unknownFormat)
    }

    @Test("the declaration is only honoured at the very start; 'encoding' needs '=' right after it")
    func declarationPlacement() throws {
        let latin1 = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><string>".utf8) + [0xC3, 0xA9] + Array("</string>".utf8)
        #expect(try xml(latin1) == "\u{C3}\u{A9}")
        #expect(try xml([0x20] + latin1) == "\u{E9}")   // not at byte 0: UTF-8
        let spaced = Array("<?xml version=\"1.0\" encoding = \"ISO-8859-1\"?><string>".utf8) + [0xC3, 0xA9] + Array("</string>".utf8)
        #expect(try xml(spaced) == "\u{E9}")
        #expect(try xml("<?xml version=\"1.0\" encoding=\"utf-8\"?><true/>") == true)
    }
}

// MARK: - Error positions

@Suite("XML reader: error positions")
struct XMLReaderPositionTests {
    @Test("errors carry the line and column of the problem")
    func positions() {
        #expect(failure("<plist>\n  <array>\n    <integr>1</integr>\n")?.position == .line(3, column: 5))
        #expect(failure("<plist>\r\n<array>\r\n<integer>x</integer>")?.position == .line(3, column: 10))
        #expect(failure("<plist>\r<array>\r\t<true/>text")?.position == .line(3, column: 9))
        #expect(failure("<dict><key>a</key></dict>")?.position == .line(1, column: 19))
    }

    @Test("the message names the problem")
    func messages() {
        let e = failure(doc("<array><integr>1</integr></array>"))
        #expect(e?.message.contains("<integr>") == true)
        #expect(e?.description.hasPrefix("line 4:8") == true)
    }
}
