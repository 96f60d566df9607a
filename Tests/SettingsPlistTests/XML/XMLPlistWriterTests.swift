import Foundation
import Testing
@testable import SettingsPlist
import SettingsTestSupport

/// The XML writer: Apple's exact layout, escaping, refusals, number and date text, base64 lines,
/// and documents that other readers (plistlib, plistutil) read back to the same value.
@Suite struct XMLPlistWriterTests {
    func xml(_ value: PlistValue) throws -> String {
        String(decoding: try XMLPlistWriter.write(value), as: UTF8.self)
    }

    func date(_ text: String) throws -> Date {
        Date(timeIntervalSinceReferenceDate: try #require(PlistDate.parse(Array(text.utf8), allowFraction: true)))
    }

    /// The lines of `document` between the header and `</plist>`.
    func body(_ document: String) -> [Substring] {
        Array(document.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(3).dropLast(2))
    }

    // MARK: Whole documents

    /// Apple's layout, as CoreFoundation writes it and as the fixture
    /// `writers/xml_written_by_plistlib.plist` (written by CPython's plistlib, which follows it)
    /// has it (keys in sorted order there, so the same order here).
    static let writtenByCoreFoundation = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>array</key>
        \t<array>
        \t\t<integer>1</integer>
        \t\t<string>plain</string>
        \t\t<array/>
        \t</array>
        \t<key>ascii</key>
        \t<string>plain</string>
        \t<key>big</key>
        \t<integer>9223372036854775807</integer>
        \t<key>bool</key>
        \t<false/>
        \t<key>data</key>
        \t<data>
        \tAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDE=
        \t</data>
        \t<key>date</key>
        \t<date>2022-03-04T05:06:07Z</date>
        \t<key>dict</key>
        \t<dict>
        \t\t<key>nested</key>
        \t\t<true/>
        \t</dict>
        \t<key>int</key>
        \t<integer>-42</integer>
        \t<key>real</key>
        \t<real>3.25</real>
        \t<key>string</key>
        \t<string>héllo 😀</string>
        </dict>
        </plist>

        """

    @Test func matchesCoreFoundationByteForByte() throws {
        let value: PlistValue = [
            "array": [1, "plain", []],
            "ascii": "plain",
            "big": .integer(PlistInteger(Int64.max)),
            "bool": false,
            "data": .data(Data(0..<50)),
            "date": .date(try date("2022-03-04T05:06:07Z")),
            "dict": ["nested": true],
            "int": -42,
            "real": 3.25,
            "string": "héllo 😀",
        ]
        #expect(try xml(value) == Self.writtenByCoreFoundation)
    }

    @Test
    func inlineCopyIsTheCorpusFile() throws {
        let bytes = try #require(FileManager.default.contents(atPath: Self.corpusFile))
        #expect(String(decoding: bytes, as: UTF8.self) == Self.writtenByCoreFoundation)
    }

    static let corpusFile = PlistFixtures.root + "/writers/xml_written_by_plistlib.plist"

    /// Layout of every kind of value, as Foundation on Linux lays it out (its
    /// PropertyListSerialization for data, dates, escapes, extreme integers, deep data lines;
    /// its PropertyListEncoder for reals). Keys stay in the dictionary's order.
    @Test func everyKindLikeFoundation() throws {
        let deep: PlistValue = [[[[[[[[[[.data(Data(repeating: 1, count: 40))]]]]]]]]]]
        let value: PlistValue = [
            "z-first": "keys are not sorted",
            "data": .data(Data(repeating: 7, count: 200)),
            "empty data": .data(Data()),
            "escapes": "a<b>&c'\"",
            "max": .integer(PlistInteger(UInt64.max)),
            "min": .integer(PlistInteger(Int64.min)),
            "empty array": [],
            "empty dict": [:],
            "date": .date(Date(timeIntervalSinceReferenceDate: -0.5)),
            "reals": [0.1, -0.0, .real(.infinity), .real(-.infinity), .real(.nan), 1e300, 100.0, 1.5e-7, 1e16],
            "uid": .uid(7),
            "deep": deep,
        ]
        let expected = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>z-first</key>
            \t<string>keys are not sorted</string>
            \t<key>data</key>
            \t<data>
            \tBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH
            \tBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH
            \tBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH
            \tBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=
            \t</data>
            \t<key>empty data</key>
            \t<data>
            \t</data>
            \t<key>escapes</key>
            \t<string>a&lt;b&gt;&amp;c'"</string>
            \t<key>max</key>
            \t<integer>18446744073709551615</integer>
            \t<key>min</key>
            \t<integer>-9223372036854775808</integer>
            \t<key>empty array</key>
            \t<array/>
            \t<key>empty dict</key>
            \t<dict/>
            \t<key>date</key>
            \t<date>2000-12-31T23:59:59Z</date>
            \t<key>reals</key>
            \t<array>
            \t\t<real>0.1</real>
            \t\t<real>-0</real>
            \t\t<real>+infinity</real>
            \t\t<real>-infinity</real>
            \t\t<real>nan</real>
            \t\t<real>1e+300</real>
            \t\t<real>100</real>
            \t\t<real>1.5e-07</real>
            \t\t<real>1e+16</real>
            \t</array>
            \t<key>uid</key>
            \t<dict>
            \t\t<key>CF$UID</key>
            \t\t<integer>7</integer>
            \t</dict>
            \t<key>deep</key>
            \t<array>
            \t\t<array>
            \t\t\t<array>
            \t\t\t\t<array>
            \t\t\t\t\t<array>
            \t\t\t\t\t\t<array>
            \t\t\t\t\t\t\t<array>
            \t\t\t\t\t\t\t\t<array>
            \t\t\t\t\t\t\t\t\t<array>
            \t\t\t\t\t\t\t\t\t\t<array>
            \t\t\t\t\t\t\t\t\t\t\t<data>
            \t\t\t\t\t\t\t\tAQEBAQEBAQEB
            \t\t\t\t\t\t\t\tAQEBAQEBAQEB
            \t\t\t\t\t\t\t\tAQEBAQEBAQEB
            \t\t\t\t\t\t\t\tAQEBAQEBAQEB
            \t\t\t\t\t\t\t\tAQEBAQ==
            \t\t\t\t\t\t\t\t\t\t\t</data>
            \t\t\t\t\t\t\t\t\t\t</array>
            \t\t\t\t\t\t\t\t\t</array>
            \t\t\t\t\t\t\t\t</array>
            \t\t\t\t\t\t\t</array>
            \t\t\t\t\t\t</array>
            \t\t\t\t\t</array>
            \t\t\t\t</array>
            \t\t\t</array>
            \t\t</array>
            \t</array>
            </dict>
            </plist>

            """
        #expect(try xml(value) == expected)
    }

    @Test func scalarRootsAndEmptyContainersSitAtDepthZero() throws {
        #expect(try xml("x") == """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <string>x</string>
            </plist>

            """)
        #expect(try xml(.uid(0)) == """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>CF$UID</key>
            \t<integer>0</integer>
            </dict>
            </plist>

            """)
        #expect(body(try xml([])) == ["<array/>"])
        #expect(body(try xml([:])) == ["<dict/>"])
        #expect(body(try xml(true)) == ["<true/>"])
        #expect(body(try xml(.data(Data([0xFF])))) == ["<data>", "/w==", "</data>"])
        #expect(body(try xml(.uid(UInt64.max))).contains("\t<integer>18446744073709551615</integer>"))
    }

    // MARK: Text

    @Test func escapesMarkupAndCarriageReturnKeepsTabAndNewline() throws {
        let value: PlistValue = ["<&>\r": "x\r\ny\tz\n<>&&é"]
        #expect(body(try xml(value)) == [
            "<dict>",
            "\t<key>&lt;&amp;&gt;&#13;</key>",
            "\t<string>x&#13;",
            "y\tz",
            "&lt;&gt;&amp;&amp;é</string>",
            "</dict>",
        ])
    }

    @Test(arguments: [
        ("a\u{0}b", "U+0000"), ("\u{1}", "U+0001"), ("0123456789abcdef\u{1B}", "U+001B"),
        ("\u{1F}", "U+001F"), ("x\u{FFFE}", "U+FFFE"), ("\u{FFFF}y", "U+FFFF"),
    ])
    func refusesCharactersXMLCannotCarry(text: String, name: String) throws {
        for value: PlistValue in [.string(text), .dictionary(PlistDictionary([(text, PlistValue.integer(1))])), [["k": [.string(text)]]]] {
            let error = try #require(throws: PlistError.self) { try XMLPlistWriter.write(value) }
            #expect(error.code == .unencodable)
            #expect(error.message.contains(name))
        }
    }

    @Test func acceptsNeighboursOfRefusedCharacters() throws {
        // U+FFFD, U+FEFF, U+FF01 (EF-led), U+EFFF, C1 controls, DEL, non-BMP: all legal XML 1.0.
        let text = "\u{FFFD}\u{FEFF}\u{FF01}\u{EFFF}\u{80}\u{9F}\u{7F}😀\u{10FFFF}"
        #expect(body(try xml(.string(text))) == ["<string>\(text)</string>"])
    }

    /// Random strings over an alphabet of hard cases, against a one-scalar-at-a-time reference.
    @Test func escapingMatchesReference() throws {
        let alphabet: [Unicode.Scalar] = ["a", "Z", " ", "<", ">", "&", "\r", "\n", "\t", "é", "😀", "\u{FF01}",
                                          "\u{FEFF}", "\u{F000}", "\u{FFFD}", "\u{3E}", "\u{3F}", "\u{3D}", "~"]
        var rng = SplitMix64(seed: 1)
        for _ in 0..<3_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int(rng.next() % 40) { scalars.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
            let text = String(scalars)
            var escaped = ""
            for s in text.unicodeScalars {
                switch s {
                case "<": escaped += "&lt;"
                case ">": escaped += "&gt;"
                case "&": escaped += "&amp;"
                case "\r": escaped += "&#13;"
                default: escaped.unicodeScalars.append(s)
                }
            }
            let line = String(decoding: try XMLPlistWriter.write(.string(text)), as: UTF8.self)
            #expect(line.contains("\n<string>\(escaped)</string>\n"), "\(Array(text.unicodeScalars))")
        }
    }

    // MARK: Numbers and dates

    @Test func integersAtTheLimits() throws {
        let values: [PlistInteger] = [0, 9, 10, 99, 100, -1, -10, 1_000_000, PlistInteger(Int64.max), PlistInteger(Int64.min),
                                      PlistInteger(UInt64(Int64.max) + 1), PlistInteger(UInt64.max), PlistInteger(Int64.min + 1)]
        let lines = body(try xml(.array(values.map(PlistValue.integer))))
        #expect(lines == ["<array>"] + values.map { "\t<integer>\($0)</integer>" } + ["</array>"])
    }

    /// Reals read `description` (minus a trailing `.0`) exactly, whichever path wrote them:
    /// random bit patterns, short decimals typical of settings, and values near the edges.
    @Test func realsAreShortestRoundTrip() throws {
        var rng = SplitMix64(seed: 7)
        var values: [Double] = [0, -0.0, 1e-3, 1e-3.nextDown, 1e15, 1e15.nextDown, 1e-4, 4503599627370496, 0.3, 2.675,
                                0.1 + 0.2, 123456789012345.6, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .leastNormalMagnitude]
        for _ in 0..<40_000 {
            values.append(Double(bitPattern: rng.next()))
            let digits = Double(rng.next() % 10_000_000)
            let scale = [1.0, 10, 100, 1_000, 1e4, 1e5, 1e6, 1e9][Int(rng.next() % 8)]
            values.append(digits / scale)
            values.append(-(digits / scale).nextUp)
            values.append(Double(rng.next() % (1 << 53)) / Double(1 << (rng.next() % 60)))
        }
        let lines = body(try xml(.array(values.map(PlistValue.real))))
        #expect(lines.count == values.count + 2)
        for (d, line) in zip(values, lines.dropFirst()) where !d.isNaN {
            var text = d.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            if d == .infinity { text = "+infinity" }
            if d == -.infinity { text = "-infinity" }
            #expect(line == "\t<real>\(text)</real>", "\(d.bitPattern)")
            let written = String(line.dropFirst(7).dropLast(7))
            #expect(Double(written.replacingOccurrences(of: "infinity", with: "inf"))?.bitPattern == d.bitPattern)
        }
    }

    @Test func datesAreWholeSecondsFlooredLikePlistDate() throws {
        var rng = SplitMix64(seed: 3)
        // Dates XML cannot carry (NaN, infinities, beyond 8-digit years) are refused: PlistDateTests.
        var times: [Double] = [0, -0.5, 0.999, -86_400.5, 1e14, -1e14, 2e14, -3e15,
                               -63_114_076_800, -63_114_076_801, 252_423_993_600]
        for _ in 0..<5_000 {
            times.append(Double(Int64(bitPattern: rng.next()) % 200_000_000_000) + Double(rng.next() % 1000) / 1000)
        }
        let lines = body(try xml(.array(times.map { .date(Date(timeIntervalSinceReferenceDate: $0)) })))
        for (t, line) in zip(times, lines.dropFirst()) {
            #expect(line == "\t<date>\(PlistDate.iso8601(t, fraction: false))</date>", "\(t)")
        }
        #expect(lines[2] == "\t<date>2000-12-31T23:59:59Z</date>")
        #expect(lines[3] == "\t<date>2001-01-01T00:00:00Z</date>")
    }

    // MARK: Data

    /// Base64 lines: 76 characters at depth 0, 8 fewer per tab, at most 8 tabs.
    @Test func dataLinesFollowTheDepth() throws {
        for depth in 0...10 {
            for count in [0, 1, 2, 3, 8, 9, 10, 11, 12, 45, 56, 57, 58, 114, 200] {
                let bytes = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ depth) })
                var value = PlistValue.data(bytes)
                for _ in 0..<depth { value = [value] }
                let lines = body(try xml(value))
                let open = lines.firstIndex { $0.hasSuffix("<data>") } ?? 0
                let close = lines.firstIndex { $0.hasSuffix("</data>") } ?? 0
                let tabs = String(repeating: "\t", count: depth)
                #expect(lines[open] == tabs + "<data>" && lines[close] == tabs + "</data>")
                let width = 76 - 8 * min(depth, 8)
                let encoded = bytes.base64EncodedString()
                var expected: [String] = []
                var rest = Substring(encoded)
                while !rest.isEmpty {
                    expected.append(String(repeating: "\t", count: min(depth, 8)) + rest.prefix(width))
                    rest = rest.dropFirst(width)
                }
                #expect(lines[(open + 1)..<close].map(String.init) == expected, "depth \(depth), \(count) bytes")
            }
        }
    }

    // MARK: Structure

    /// Nesting is walked with an explicit stack; each level adds one tab, down to the deepest
    /// nesting readers accept; deeper is refused (no reader would read the document back).
    @Test func deepNestingIsIndentedPerLevel() throws {
        let depth = PlistNesting.maximumDepth
        var value: PlistValue = "leaf"
        for _ in 0..<depth { value = [value] }
        let lines = body(try xml(value))
        #expect(lines.count == 2 * depth + 1)
        #expect(lines[depth] == String(repeating: "\t", count: depth) + "<string>leaf</string>")
        #expect(lines[depth + 1] == String(repeating: "\t", count: depth - 1) + "</array>")
        #expect(lines.last == "</array>")
        for _ in depth..<2_000 { value = [value] }
        #expect(throws: PlistError.self) { try xml(value) }
    }

    /// Text that needs far more room escaped than its length (the size estimate's assumption)
    /// moves the output to a larger buffer mid-way; the document is still exact.
    @Test func heavilyEscapedTextOutgrowsTheEstimate() throws {
        let text = String(repeating: "&<>\r", count: 50_000)
        let value: PlistValue = [.string(text), ["k": .string(text)]]
        let expected = String(repeating: "&amp;&lt;&gt;&#13;", count: 50_000)
        let written = try XMLPlistWriter.write(value)
        #expect(written.count > 2 * XMLPlistWriter.estimatedSize(of: value, stoppingAbove: .max))
        #expect(body(String(decoding: written, as: UTF8.self)) == [
            "<array>", "\t<string>\(expected)</string>", "\t<dict>", "\t\t<key>k</key>",
            "\t\t<string>\(expected)</string>", "\t</dict>", "</array>",
        ])
    }

    /// Shared storage lets a small value stand for a huge document (here 10^12 strings);
    /// it is refused after counting just past the limit, without writing.
    @Test func refusesDocumentsLargerThanTheLimit() throws {
        var value: PlistValue = "shared"
        for _ in 0..<4 { value = .array(Array(repeating: value, count: 1_000)) }
        let error = try #require(throws: PlistError.self) { try XMLPlistWriter.write(value, sizeLimit: 1 << 20) }
        #expect(error.code == .unencodable)
        #expect(error.message.contains("larger than 1048576 bytes"))
        let small: PlistValue = [.string(String(repeating: "x", count: 1_000))]
        #expect(throws: PlistError.self) { try XMLPlistWriter.write(small, sizeLimit: 1_000) }
        #expect(try XMLPlistWriter.write(small, sizeLimit: 1_300).count == 1_209)
    }

    // MARK: Other readers

    /// A value with everything other readers must get back exactly (CR included, -0.0, the
    /// integer extremes, non-ASCII text and keys, data, a date, key order).
    static let sample: PlistValue = [
        "text": "line\r\nnext <tag> & \"quotes\" 'apos' é 😀 \u{FEFF}\t end",
        "ünïcödé key <&>": [1, -1, .integer(PlistInteger(UInt64.max)), .integer(PlistInteger(Int64.min))],
        "reals": [0.1, -0.0, 1e300, .real(.leastNonzeroMagnitude), -2.5, .real(.infinity), .real(-.infinity)],
        "flags": [true, false],
        "blob": .data(Data((0..<300).map { UInt8($0 % 256) })),
        "when": .date(Date(timeIntervalSinceReferenceDate: 700_000_000.75)),
        "nested": ["empty": [], "also empty": [:], "a": ["b": ["c": "d"]]],
    ]

    /// The Python expression plistlib must produce from ``sample`` (dates floored to the second).
    static let sampleInPython = """
        {"text": "line\\r\\nnext <tag> & \\"quotes\\" 'apos' \\u00e9 \\U0001F600 \\ufeff\\t end",
         "\\u00fcn\\u00efc\\u00f6d\\u00e9 key <&>": [1, -1, 18446744073709551615, -9223372036854775808],
         "reals": [0.1, -0.0, 1e300, 5e-324, -2.5, float("inf"), float("-inf")],
         "flags": [True, False],
         "blob": bytes(i % 256 for i in range(300)),
         "when": datetime.datetime(2023, 3, 8, 20, 26, 40),
         "nested": {"empty": [], "also empty": {}, "a": {"b": {"c": "d"}}}}
        """

    /// plistlib reads the document to exactly the value (and keeps key order); the script
    /// prints `ok` or what differs.
    static let pythonCheck = """
        import datetime, math, plistlib, sys
        def same(a, b):
            if type(a) is not type(b): return False
            if isinstance(a, float): return repr(a) == repr(b)
            if isinstance(a, dict): return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
            if isinstance(a, list): return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
            return a == b
        got = plistlib.load(open(sys.argv[1], "rb"))
        expected = \(sampleInPython)
        print("ok" if same(got, expected) else "differs: %r" % (got,))
        """

    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        try runProgram(URL(filePath: tool), arguments).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func plistlibReadsTheSampleBack() throws {
        let dir = try TemporaryDirectory()
        let plist = dir.path("sample.plist"), script = dir.path("check.py")
        #expect(FileManager.default.createFile(atPath: plist, contents: Data(try XMLPlistWriter.write(Self.sample))))
        #expect(FileManager.default.createFile(atPath: script, contents: Data(Self.pythonCheck.utf8)))
        #expect(try Self.run("/usr/bin/python3", [script, plist]) == "ok")
    }

    /// plistutil (libplist) converts the document to binary; plistlib then reads that back.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/plistutil")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func plistutilReadsTheSampleBack() throws {
        let dir = try TemporaryDirectory()
        let plist = dir.path("sample.plist"), binary = dir.path("sample.bplist"), script = dir.path("check.py")
        #expect(FileManager.default.createFile(atPath: plist, contents: Data(try XMLPlistWriter.write(Self.sample))))
        #expect(FileManager.default.createFile(atPath: script, contents: Data(Self.pythonCheck.utf8)))
        _ = try Self.run("/usr/bin/plistutil", ["-i", plist, "-f", "bin", "-o", binary])
        #expect(try Self.run("/usr/bin/python3", [script, binary]) == "ok")
    }
}
