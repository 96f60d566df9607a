import Foundation
import Testing
@testable import SettingsPlist

/// The writers never produce a file the readers refuse as too deep.
@Suite("Nesting limit shared by readers and writers")
struct PlistNestingTests {
    /// `levels` dictionaries, each holding the next under `"k"`, the innermost holding `inner`.
    private func dictionaries(_ levels: Int, inner: PlistValue = "leaf") -> PlistValue {
        var value = inner
        for _ in 0..<levels { value = .dictionary(["k": value]) }
        return value
    }

    /// Under ThreadSanitizer (`-DSETTINGS_TSAN`), 512 levels of the binary reader's recursion and of
    /// `PlistValue`'s synthesized `==`, in the sanitizer's larger frames, overflow the stack of a
    /// test's cooperative-pool thread (the process dies with no report): the plain run checks it.
    static let deepRecursionRuns: Bool = {
        #if SETTINGS_TSAN
        false
        #else
        true
        #endif
    }()

    @Test(.enabled(if: deepRecursionRuns, "512-level recursion overflows a pool thread's stack under ThreadSanitizer"),
          arguments: [PlistFormat.xml, .binary])
    func theDeepestReadableValueIsWrittenAndReadBack(format: PlistFormat) throws {
        let value = dictionaries(PlistNesting.maximumDepth)
        let bytes = try value.encoded(as: format)
        #expect(try PlistValue(decoding: bytes) == value)
        // Empty containers count too: the binary reader counts them.
        let withEmpty = dictionaries(PlistNesting.maximumDepth - 1, inner: .array([]))
        #expect(try PlistValue(decoding: withEmpty.encoded(as: format)) == withEmpty)
    }

    @Test(arguments: [PlistFormat.xml, .binary])
    func oneLevelMoreIsRefusedWithItsPath(format: PlistFormat) throws {
        for inner in [PlistValue.array([]), .array(["x"]), .dictionary([:])] {
            let value = dictionaries(PlistNesting.maximumDepth, inner: inner)
            // Before: both writers wrote it, and both readers refused the file.
            let error = try #require(throws: PlistError.self) { try value.encoded(as: format) }
            #expect(error.code == .tooDeep)
            #expect(error.codingPath?.contains("512 levels") == true)
            #expect(error.description.contains("deeper than 512"))
        }
    }

    @Test func theReadersDefaultLimitIsTheWritersLimit() {
        #expect(PlistReadOptions().maximumDepth == PlistNesting.maximumDepth)
    }

    @Test func firstPathTooDeepNamesTheWayDown() {
        let value: PlistValue = ["a": ["b": [["c": [1]]]]]
        // Inside 509 containers: "a"'s dictionary is 511th, "b"'s array 512th, its dictionary 513th.
        #expect(PlistNesting.firstPathTooDeep(in: value, enclosingDepth: 509) == ["a", "b", "[0]"])
        #expect(PlistNesting.firstPathTooDeep(in: value, enclosingDepth: 507) == nil)
        #expect(PlistNesting.firstPathTooDeep(in: "scalar", enclosingDepth: 10_000) == nil)
    }

    @Test func payloadSizeCountsEveryOccurrence() {
        let big = PlistValue.string(String(repeating: "x", count: 100))
        let value = PlistValue.array(Array(repeating: big, count: 10))
        #expect(value.payloadSize(stoppingAbove: .max) == 1000)
        #expect(value.payloadSize(stoppingAbove: 150) > 150)
    }
}
