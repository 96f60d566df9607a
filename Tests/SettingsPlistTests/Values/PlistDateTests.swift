#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import SettingsPlist

/// Dates in every text form: the proleptic Gregorian calendar on both sides (before 1582
/// included), and dates that a form cannot carry (NaN, infinities, beyond its years) refused or
/// carried exactly, never clamped.
@Suite struct PlistDateTests {
    func date(_ seconds: Double) -> PlistValue { .date(Date(timeIntervalSinceReferenceDate: seconds)) }

    func xmlDocument(_ dateText: String) -> [UInt8] {
        Array("<plist version=\"1.0\"><date>\(dateText)</date></plist>".utf8)
    }

    func writtenXMLDate(_ seconds: Double) throws -> String {
        let lines = String(decoding: try XMLPlistWriter.write(date(seconds)), as: UTF8.self).split(separator: "\n")
        let line = try #require(lines.count == 5 ? lines[3] : nil)   // header (3 lines), the date, </plist>
        #expect(line.hasPrefix("<date>") && line.hasSuffix("</date>"))
        return String(line.dropFirst(6).dropLast(7))
    }

    func readXMLDate(_ text: String) throws -> Double {
        let value = try PlistValue(decoding: Data(xmlDocument(text)))
        return try #require(value.dateValue).timeIntervalSinceReferenceDate
    }

    // MARK: Before 1582-10-15: proleptic Gregorian, as plistlib, libplist and ISO 8601

    /// Seconds since 2001-01-01 from Python's `datetime` (proleptic Gregorian):
    /// `(datetime(y, m, d) - datetime(2001, 1, 1)).total_seconds()`; year 0 and -1 by the same
    /// arithmetic (ISO 8601's astronomical years: 0000 is 1 BC, a leap year).
    static let prolepticDays: [(text: String, seconds: Double)] = [
        ("1582-10-15T00:00:00Z", -13_197_600_000),   // the first Gregorian day
        ("1582-10-04T00:00:00Z", -13_198_550_400),   // Foundation (Julian before the switch): one day before 10-15
        ("1000-02-29T12:00:00Z", -31_583_390_400),   // a leap day only in the Julian calendar: rolls to 03-01
        ("0001-01-01T00:00:00Z", -63_113_904_000),   // the corpus's distant past
        ("0000-02-29T00:00:00Z", -63_140_428_800),   // year 0 is a leap year
        ("0000-01-02T00:00:00Z", -63_145_440_000),
        ("-0001-12-31T00:00:00Z", -63_145_612_800),
    ]

    @Test func readsDatesBefore1582InTheProlepticGregorianCalendar() throws {
        for (text, seconds) in Self.prolepticDays {
            #expect(try readXMLDate(text) == seconds, "\(text)")
            #expect(try PlistValue(typedJSON: Array(#"{"date": "\#(text)"}"#.utf8)) == date(seconds), "\(text)")
        }
        // 1582-10-04 and 1582-10-15 are eleven days apart, not one as in Foundation.
        #expect(try readXMLDate("1582-10-15T00:00:00Z") - readXMLDate("1582-10-04T00:00:00Z") == 11 * 86_400)
    }

    @Test func writesDatesBefore1582InTheProlepticGregorianCalendar() throws {
        for (text, seconds) in Self.prolepticDays where !text.hasPrefix("1000-02-29") {
            #expect(try writtenXMLDate(seconds) == text)
            #expect(date(seconds).typedJSON() == #"{"date": "\#(text)"}"#)
        }
        #expect(try writtenXMLDate(-31_583_390_400) == "1000-03-01T12:00:00Z")
    }

    /// Every day of years -1, 0, 1, 1582 and 1600, and every 29th day from -1 to 1600: text ->
    /// seconds -> the same text, one day apart.
    @Test func readingAndWritingAreSymmetric() throws {
        var days: [Double] = []
        for year in ["-0001", "0000", "0001", "1582", "1600"] {
            let first = try readXMLDate("\(year)-01-01T00:00:00Z")
            days += (0..<366).map { first + Double($0) * 86_400 }
        }
        let start = try readXMLDate("-0001-01-01T00:00:00Z"), end = try readXMLDate("1601-01-01T00:00:00Z")
        days += stride(from: start, to: end, by: 29 * 86_400)
        for seconds in days {
            let text = try writtenXMLDate(seconds)
            #expect(try readXMLDate(text) == seconds, "\(text)")
            let next = try writtenXMLDate(seconds + 86_400)
            #expect(try readXMLDate(next) - readXMLDate(text) == 86_400, "\(text)")
        }
    }

    // MARK: Dates a form cannot carry: refused by XML, exact in typed JSON

    /// The XML writer writes every date its reader reads: years -99,999,999 to 99,999,999.
    @Test func xmlCarriesEveryDateItsReaderReads() throws {
        let earliest = try readXMLDate("-99999999-01-01T00:00:00Z")
        let latest = try readXMLDate("99999999-12-31T23:59:59Z")
        #expect(try writtenXMLDate(earliest) == "-99999999-01-01T00:00:00Z")
        #expect(try writtenXMLDate(latest) == "99999999-12-31T23:59:59Z")
        #expect(try writtenXMLDate(latest + 0.5) == "99999999-12-31T23:59:59Z")   // whole seconds, floored
        for seconds in [2e14, -2e14, 1e15, -3e15, 123_456_789_012_345] {
            #expect(try readXMLDate(writtenXMLDate(seconds)) == seconds.rounded(.down), "\(seconds)")
        }
    }

    @Test(arguments: [
        (Double.nan, "nan"), (.infinity, "+infinity"), (-.infinity, "-infinity"),
        (1e300, "1e+300"), (-1e300, "-1e+300"), (.greatestFiniteMagnitude, "1.7976931348623157e+308"),
        (3.2e15, "3200000000000000.0"), (-1e16, "-1e+16"),
    ])
    func xmlRefusesDatesItCannotCarry(seconds: Double, shown: String) throws {
        let error = try #require(throws: PlistError.self) { try XMLPlistWriter.write(["when": date(seconds)]) }
        #expect(error.code == .unencodable)
        #expect(error.message == "XML cannot carry the date \(shown) (seconds since 2001-01-01T00:00:00Z): XML dates are years -99999999 to 99999999; use the binary format")
        // The binary format carries it exactly.
        #expect(try PlistValue(decoding: date(seconds).encoded(as: .binary)) == date(seconds))
    }

    @Test(arguments: [
        (Double.nan, #"{"date": "nan"}"#),
        (.infinity, #"{"date": "inf"}"#),
        (-.infinity, #"{"date": "-inf"}"#),
        (1e300, #"{"date": 1e+300}"#),
        (-.greatestFiniteMagnitude, #"{"date": -1.7976931348623157e+308}"#),
        (3.2e15, #"{"date": 3200000000000000.0}"#),
        (.leastNonzeroMagnitude, #"{"date": 5e-324}"#),   // no ISO fraction short enough
        (-1e-300, #"{"date": -1e-300}"#),
        (2e14 + 0.5, #"{"date": "6339748-09-13T19:33:20.5Z"}"#),
    ])
    func typedJSONCarriesEveryDateExactly(seconds: Double, json: String) throws {
        #expect(date(seconds).typedJSON() == json)
        #expect(try PlistValue(typedJSON: Array(json.utf8)) == date(seconds))
    }

    @Test func typedJSONReadsTheSpellingsOfNonFiniteDates() throws {
        #expect(try PlistValue(typedJSON: Array(#"{"date": "+inf"}"#.utf8)) == date(.infinity))
        #expect(throws: PlistError.self) { try PlistValue(typedJSON: Array(#"{"date": "infinity"}"#.utf8)) }
        #expect(throws: PlistError.self) { try PlistValue(typedJSON: Array(#"{"date": "1e999"}"#.utf8)) }
    }

    @Test func descriptionsNeverInventAYear() {
        #expect(date(.nan).description == "nan")
        #expect(date(-.infinity).description == "-inf")
        #expect(date(1e300).description == "1e+300 seconds since 2001-01-01T00:00:00Z")
        #expect(date(0.5).description == "2001-01-01T00:00:00.5Z")
    }
}

/// Dates as `PlistDate` prints and reads them.
struct PlistDateTextTests {
    @Test(arguments: [
        (0.0, "2001-01-01T00:00:00Z"),
        (-1.0, "2000-12-31T23:59:59Z"),
        (0.25, "2001-01-01T00:00:00.25Z"),
        (-0.5, "2000-12-31T23:59:59.5Z"),
        (-978_307_200.0, "1970-01-01T00:00:00Z"),
        (-63_113_904_000.0, "0001-01-01T00:00:00Z"),
        (1e-6, "2001-01-01T00:00:00.000001Z"),
    ])
    func formatsShortestExactText(seconds: Double, text: String) {
        #expect(PlistDate.iso8601(seconds, fraction: true) == text)
        #expect(PlistDate.parse(text.utf8, allowFraction: true) == seconds)
    }

    @Test func wholeSecondFormFloors() {
        #expect(PlistDate.iso8601(0.75, fraction: false) == "2001-01-01T00:00:00Z")
        #expect(PlistDate.iso8601(-0.25, fraction: false) == "2000-12-31T23:59:59Z")
    }

    @Test func fractionsRoundTripForAwkwardDoubles() {
        for t in [1.1, 123_456_789.123_456_7, -987_654.321, 0.1 + 0.2, 7e-10, 6e8 + 1.0 / 3.0] {
            let text = PlistDate.iso8601(t, fraction: true)
            #expect(PlistDate.parse(text.utf8, allowFraction: true) == t, "\(t) -> \(text)")
        }
    }

    @Test func strictXMLFormRejectsFractionsAndJunk() {
        #expect(PlistDate.parse("2001-01-01T00:00:00.5Z".utf8, allowFraction: false) == nil)
        #expect(PlistDate.parse("2001-01-01T00:00:00".utf8, allowFraction: false) == nil)
        #expect(PlistDate.parse("2001-01-01 00:00:00Z".utf8, allowFraction: false) == nil)
        #expect(PlistDate.parse("99999999999-01-01T00:00:00Z".utf8, allowFraction: false) == nil)
        #expect(PlistDate.parse("2001-13-01T00:00:00Z".utf8, allowFraction: false) == PlistDate.parse("2002-01-01T00:00:00Z".utf8, allowFraction: false))
    }
}
