#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import SettingsPlist

// MARK: - Models

private struct Server: Codable, Equatable, Sendable {
    var host: String
    var port: Int
}

private struct Config: Codable, Equatable, Sendable {
    var name: String
    var servers: [Server]
}

private struct Profile: Codable, Equatable, Sendable {
    var name: String
    var nickname: String?
    var age: Int?
}

private enum Shape: Codable, Equatable, Sendable {
    case circle(radius: Double)
    case rect(Int, Int)
    case point
}

private enum Color: String, Codable, Equatable, Sendable {
    case red, green
}

private struct Level: Codable, Equatable, Sendable {
    var level: UInt8
}

private struct Flag: Codable, Equatable, Sendable {
    var on: Bool
}

private struct Ratio: Codable, Equatable, Sendable {
    var ratio: Float
}

private struct Measure: Codable, Equatable, Sendable {
    var value: Double
}

private struct Stamp: Codable, Equatable, Sendable {
    var when: Date
}

private struct Blob: Codable, Equatable, Sendable {
    var bytes: Data
}

private struct Link: Codable, Equatable, Sendable {
    var url: URL
}

private struct Wide: Codable, Equatable, Sendable {
    var big: Int128
}

private struct Palette: Codable, Equatable, Sendable {
    var color: Color
}

/// One row of the round-trip matrix: a value, the exact tree it encodes to, and back.
struct RoundTripCase: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let check: @Sendable () throws -> Void

    init<T: Codable & Equatable & Sendable>(_ name: String, _ value: T, _ expected: PlistValue) {
        testDescription = name
        check = {
            let tree = try PlistEncoder().encodeToValue(value)
            #expect(tree == expected, "\(name) encodes to \(tree)")
            let back = try PlistDecoder().decode(T.self, from: tree)
            #expect(back == value, "\(name) decodes back to \(back)")
        }
    }
}

private func int(_ v: Int64) -> PlistValue { .integer(PlistInteger(v)) }
private func uint(_ v: UInt64) -> PlistValue { .integer(PlistInteger(v)) }

private let roundTripCases: [RoundTripCase] = [
    RoundTripCase("Bool", true, .bool(true)),
    RoundTripCase("String", "héllo ✓", .string("héllo ✓")),
    RoundTripCase("empty String", "", .string("")),
    RoundTripCase("Int.min", Int.min, int(Int64.min)),
    RoundTripCase("Int8.min", Int8.min, int(-128)),
    RoundTripCase("Int16.max", Int16.max, int(32767)),
    RoundTripCase("Int32.min", Int32.min, int(-2_147_483_648)),
    RoundTripCase("Int64.max", Int64.max, int(Int64.max)),
    RoundTripCase("UInt.max", UInt.max, uint(UInt64.max)),
    RoundTripCase("UInt8.max", UInt8.max, uint(255)),
    RoundTripCase("UInt16.max", UInt16.max, uint(65535)),
    RoundTripCase("UInt32.max", UInt32.max, uint(4_294_967_295)),
    RoundTripCase("UInt64.max", UInt64.max, uint(UInt64.max)),
    RoundTripCase("Int128", Int128(-5), int(-5)),
    RoundTripCase("UInt128", UInt128(UInt64.max), uint(UInt64.max)),
    RoundTripCase("Float", Float(1.5), .real(1.5)),
    RoundTripCase("Double", -0.25, .real(-0.25)),
    RoundTripCase("Double.infinity", Double.infinity, .real(.infinity)),
    RoundTripCase("Date", Date(timeIntervalSinceReferenceDate: 123.5), .date(Date(timeIntervalSinceReferenceDate: 123.5))),
    RoundTripCase("Data", Data([0, 1, 255]), .data(Data([0, 1, 255]))),
    RoundTripCase("URL", URL(string: "https://example.com/a?b=c")!, .string("https://example.com/a?b=c")),
    RoundTripCase("[String]", ["a", "b"], ["a", "b"]),
    RoundTripCase("[[Int]]", [[1, 2], [3]], [[1, 2], [3]]),
    RoundTripCase("[Int?]", [1, nil, 3] as [Int?], [1, "$null", 3]),
    RoundTripCase("[String: Int]", ["a": 1], ["a": 1]),
    RoundTripCase("[Int: String]", [7: "x"], ["7": "x"]),
    RoundTripCase("[Date]", [Date(timeIntervalSinceReferenceDate: 0)], [.date(Date(timeIntervalSinceReferenceDate: 0))]),
    RoundTripCase("struct", Server(host: "a.example", port: 443), ["host": "a.example", "port": 443]),
    RoundTripCase(
        "nested structs",
        Config(name: "prod", servers: [Server(host: "a", port: 1), Server(host: "b", port: 2)]),
        ["name": "prod", "servers": [["host": "a", "port": 1], ["host": "b", "port": 2]]]
    ),
    RoundTripCase("optionals nil", Profile(name: "Ada", nickname: nil, age: nil), ["name": "Ada"]),
    RoundTripCase("optionals set", Profile(name: "Ada", nickname: "A", age: 36), ["name": "Ada", "nickname": "A", "age": 36]),
    RoundTripCase("enum labelled payload", Shape.circle(radius: 2), ["circle": ["radius": 2.0]]),
    RoundTripCase("enum unlabelled payload", Shape.rect(3, 4), ["rect": ["_0": 3, "_1": 4]]),
    RoundTripCase("enum no payload", Shape.point, ["point": [:]]),
    RoundTripCase("raw enum", Palette(color: .green), ["color": "green"]),
    RoundTripCase("[Int]", [1, -2], [1, -2]),
    RoundTripCase("[Double]", [0.5, 2], [0.5, 2.0]),
    RoundTripCase("[Bool]", [true, false], [true, false]),
    RoundTripCase("[Float]", [Float(1.5)], [1.5]),
    RoundTripCase("[UInt8]", [UInt8(0), 255], [0, 255]),
    RoundTripCase("[String: UInt8]", ["a": UInt8(7)], ["a": 7]),
    RoundTripCase("[String: Float]", ["f": Float(0.5)], ["f": 0.5]),
    RoundTripCase("[String: Date]", ["d": Date(timeIntervalSinceReferenceDate: 1)], ["d": .date(Date(timeIntervalSinceReferenceDate: 1))]),
    RoundTripCase("[Data]", [Data([7])], [.data(Data([7]))]),
    RoundTripCase("[URL]", [URL(string: "file:///tmp/a%20b")!], ["file:///tmp/a%20b"]),
    RoundTripCase("top-level nil", Int?.none, "$null"),
    RoundTripCase("top-level some", Int?.some(4), 4),
]

// MARK: - Tests

@Suite struct CodableTests {
    @Test(arguments: roundTripCases)
    func roundTrips(_ row: RoundTripCase) throws {
        try row.check()
    }

    @Test func keyOrderFollowsEncodingOrder() throws {
        struct Ordered: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: PlistCodingKey.self)
                for name in ["zeta", "alpha", "mid", "beta"] { try c.encode(name.count, forKey: .name(name)) }
                try c.encode(0, forKey: .name("alpha"))   // replaced in place, keeps its position
            }
        }
        let tree = try PlistEncoder().encodeToValue(Ordered())
        #expect(tree.dictionaryValue?.keys == ["zeta", "alpha", "mid", "beta"])
        #expect(tree["alpha"] == 0)
    }

    @Test func explicitNilInKeyedContainerLeavesTheKeyOut() throws {
        struct Cleared: Codable {
            enum Keys: CodingKey { case a, b }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: Keys.self)
                try c.encode(1, forKey: .a)
                try c.encode(2, forKey: .b)
                try c.encodeNil(forKey: .a)
            }
            init() {}
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: Keys.self)
                #expect(try c.decodeNil(forKey: .a))
                #expect(try !c.decodeNil(forKey: .b))
            }
        }
        let tree = try PlistEncoder().encodeToValue(Cleared())
        #expect(tree == ["b": 2])
        _ = try PlistDecoder().decode(Cleared.self, from: tree)
    }

    @Test func foundationNullMarkerDecodesAsNil() throws {
        let tree: PlistValue = ["name": "Ada", "nickname": "$null", "age": "$null"]
        #expect(try PlistDecoder().decode(Profile.self, from: tree) == Profile(name: "Ada", nickname: nil, age: nil))
        #expect(try PlistDecoder().decode([String?].self, from: ["$null", "x"]) == [nil, "x"])
    }

    @Test func decodeIfPresentStillChecksTheType() throws {
        let tree: PlistValue = ["name": "Ada", "age": "old"]
        let error = try #require(throws: PlistError.self) { try PlistDecoder().decode(Profile.self, from: tree) }
        #expect(error.description == #"at age: expected integer, found string "old""#)
    }

    @Test func topLevelScalars() throws {
        #expect(try PlistEncoder().encodeToValue(42) == 42)
        #expect(try PlistEncoder().encodeToValue("x") == "x")
        #expect(try PlistDecoder().decode(Int.self, from: 42) == 42)
        #expect(try PlistDecoder().decode(Color.self, from: "red") == .red)
        #expect(try PlistDecoder().decode(Date.self, from: .date(Date(timeIntervalSinceReferenceDate: 5))) == Date(timeIntervalSinceReferenceDate: 5))
    }

    @Test func urlReadsFoundationsKeyedForm() throws {
        let tree: PlistValue = ["relative": "https://example.com/x"]
        #expect(try PlistDecoder().decode(URL.self, from: tree) == URL(string: "https://example.com/x"))
    }

    @Test func integralRealsReadAsIntegersAndExactIntegersAsReals() throws {
        #expect(try PlistDecoder().decode(Int.self, from: .real(3)) == 3)
        #expect(try PlistDecoder().decode(Double.self, from: 3) == 3.0)
        #expect(try PlistDecoder().decode(Float.self, from: .real(0.1)) == Float(0.1))
        #expect(try PlistDecoder().decode(Float.self, from: .real(.nan)).isNaN)
    }

    @Test func intKeyedDictionaryUsesStringKeys() throws {
        let tree = try PlistEncoder().encodeToValue([1: true, 2: false])
        #expect(Set(tree.dictionaryValue?.keys ?? []) == ["1", "2"])
        #expect(try PlistDecoder().decode([Int: Bool].self, from: tree) == [1: true, 2: false])
    }

    @Test func keysCompareByCodePoints() throws {
        struct Accent: Decodable {
            enum Keys: String, CodingKey { case cafe = "caf\u{E9}" }
            var found: Bool
            init(from decoder: any Decoder) throws {
                found = try decoder.container(keyedBy: Keys.self).contains(.cafe)
            }
        }
        #expect(try PlistDecoder().decode(Accent.self, from: ["caf\u{E9}": 1]).found)
        #expect(try !PlistDecoder().decode(Accent.self, from: ["cafe\u{301}": 1]).found)
    }

    @Test func keysDecodeInAnyOrderAndFromLargeDictionaries() throws {
        struct Reversed: Decodable, Equatable {
            var values: [Int]
            init(values: [Int]) { self.values = values }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: PlistCodingKey.self)
                values = try (0..<20).reversed().map { try c.decode(Int.self, forKey: .name("k\($0)")) }
            }
        }
        let tree = PlistValue.dictionary(PlistDictionary((0..<20).map { ("k\($0)", int(Int64($0))) }))
        #expect(try PlistDecoder().decode(Reversed.self, from: tree) == Reversed(values: (0..<20).reversed()))
    }

    @Test func nestedContainers() throws {
        struct Pair: Codable, Equatable {
            var x: Int
            var tags: [String]
            enum Keys: CodingKey { case point, tags, x }
            init(x: Int, tags: [String]) { self.x = x; self.tags = tags }
            func encode(to encoder: any Encoder) throws {
                var outer = encoder.container(keyedBy: Keys.self)
                var point = outer.nestedContainer(keyedBy: Keys.self, forKey: .point)
                var list = outer.nestedUnkeyedContainer(forKey: .tags)
                try point.encode(x, forKey: .x)   // written after the sibling was requested
                for t in tags {
                    var inner = list.nestedUnkeyedContainer()
                    try inner.encode(t)
                }
            }
            init(from decoder: any Decoder) throws {
                let outer = try decoder.container(keyedBy: Keys.self)
                x = try outer.nestedContainer(keyedBy: Keys.self, forKey: .point).decode(Int.self, forKey: .x)
                var list = try outer.nestedUnkeyedContainer(forKey: .tags)
                var out: [String] = []
                while !list.isAtEnd {
                    var inner = try list.nestedUnkeyedContainer()
                    out.append(try inner.decode(String.self))
                }
                tags = out
            }
        }
        let value = Pair(x: 5, tags: ["a", "b"])
        let tree = try PlistEncoder().encodeToValue(value)
        #expect(tree == ["point": ["x": 5], "tags": [["a"], ["b"]]])
        #expect(try PlistDecoder().decode(Pair.self, from: tree) == value)
    }

    @Test func superCoders() throws {
        let value = Dog(name: "Rex", legs: 4)
        let tree = try PlistEncoder().encodeToValue(value)
        #expect(tree == ["breed": "Rex", "super": ["legs": 4], "extra": ["legs": 4], "list": [["legs": 4]]])
        let back = try PlistDecoder().decode(Dog.self, from: tree)
        #expect(back.name == "Rex" && back.legs == 4)
    }

    @Test func errorsInsideSuperDecodersCarryTheirPath() throws {
        let tree: PlistValue = ["breed": "Rex", "super": ["legs": "four"], "extra": ["legs": 4], "list": [["legs": 4]]]
        let error = try #require(throws: PlistError.self) { try PlistDecoder().decode(Dog.self, from: tree) }
        #expect(error.description == #"at super.legs: expected integer, found string "four""#)
    }

    @Test func userInfoReachesTheCodedTypes() throws {
        let key = try #require(CodingUserInfoKey(rawValue: "unit"))
        struct Probe: Codable {
            var unit: String
            init(unit: String) { self.unit = unit }
            init(from decoder: any Decoder) throws { unit = Probe.unit(in: decoder.userInfo) }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                try c.encode(Probe.unit(in: encoder.userInfo))
            }
            static func unit(in info: [CodingUserInfoKey: Any]) -> String {
                info.first { $0.key.rawValue == "unit" }?.value as? String ?? "none"
            }
        }
        #expect(try PlistEncoder(userInfo: [key: "cm"]).encodeToValue(Probe(unit: "")) == "cm")
        #expect(try PlistDecoder(userInfo: [key: "mm"]).decode(Probe.self, from: 0).unit == "mm")
    }

    @Test func codingPathsSeenByTheCodedTypes() throws {
        struct PathProbe: Decodable {
            var path: String
            init(from decoder: any Decoder) throws { path = CodingPathText.render(decoder.codingPath) }
        }
        let tree: PlistValue = ["items": [["p": 1], ["p": 2]]]
        let decoded = try PlistDecoder().decode([String: [PathProbe]].self, from: tree)
        #expect(decoded["items"]?.map(\.path) == ["items[0]", "items[1]"])
    }

    @Test func codingPathRendering() {
        let path: [any CodingKey] = [
            PlistCodingKey.name("servers"), PlistCodingKey.index(2), PlistCodingKey.name("port"),
            PlistCodingKey.name("two words"), PlistCodingKey.name("a.b"),
        ]
        #expect(CodingPathText.render(path) == #"servers[2].port["two words"]["a.b"]"#)
        #expect(CodingPathText.render([PlistCodingKey.index(0)]) == "[0]")
    }
}

// MARK: - Errors

/// One decoding failure: a type, a tree, and the exact description of the error.
struct DecodingErrorCase: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let code: PlistError.Code
    let expected: String
    let run: @Sendable () throws -> Void

    init<T: Decodable & Sendable>(_ type: T.Type, _ tree: PlistValue, _ code: PlistError.Code, _ expected: String) {
        testDescription = expected
        self.code = code
        self.expected = expected
        run = { _ = try PlistDecoder().decode(T.self, from: tree) }
    }
}

private let configWithBadPort: PlistValue = [
    "name": "prod",
    "servers": [["host": "a", "port": 1], ["host": "b", "port": 2], ["host": "c", "port": "abc"]],
]

private let decodingErrorCases: [DecodingErrorCase] = [
    DecodingErrorCase(Config.self, configWithBadPort, .typeMismatch, #"at servers[2].port: expected integer, found string "abc""#),
    DecodingErrorCase(Config.self, ["name": "prod", "servers": [["host": "a"]]], .missingValue,
                      #"at servers[0].port: missing key "port" (expected integer)"#),
    DecodingErrorCase(Config.self, ["servers": []], .missingValue, #"at name: missing key "name" (expected string)"#),
    DecodingErrorCase(Config.self, ["name": "x"], .missingValue, #"at servers: missing key "servers" (expected Array<Server>)"#),
    DecodingErrorCase(Config.self, ["name": "x", "servers": ["s"]], .typeMismatch, #"at servers[0]: expected dict, found string "s""#),
    DecodingErrorCase(Config.self, ["name": "x", "servers": ["k": 1]], .typeMismatch, "at servers: expected array, found dict (1 key)"),
    DecodingErrorCase(Config.self, [1, 2], .typeMismatch, "expected dict, found array (2 elements)"),
    DecodingErrorCase(Level.self, ["level": 300], .typeMismatch, "at level: expected UInt8, found integer 300 (out of range 0...255)"),
    DecodingErrorCase(Level.self, ["level": -1], .typeMismatch, "at level: expected UInt8, found integer -1 (out of range 0...255)"),
    DecodingErrorCase(Level.self, ["level": .real(300)], .typeMismatch, "at level: expected UInt8, found real 300.0 (out of range 0...255)"),
    DecodingErrorCase(Level.self, ["level": .real(3.5)], .typeMismatch, "at level: expected integer, found real 3.5"),
    DecodingErrorCase(Int.self, uint(UInt64.max), .typeMismatch,
                      "expected Int, found integer 18446744073709551615 (out of range -9223372036854775808...9223372036854775807)"),
    DecodingErrorCase(Flag.self, ["on": 1], .typeMismatch, "at on: expected bool, found integer 1"),
    DecodingErrorCase(Flag.self, ["on": "true"], .typeMismatch, #"at on: expected bool, found string "true""#),
    DecodingErrorCase(Ratio.self, ["ratio": .real(1e300)], .typeMismatch, "at ratio: expected Float, found real 1e+300 (out of range)"),
    DecodingErrorCase(Ratio.self, ["ratio": 16_777_217], .typeMismatch,
                      "at ratio: expected Float, found integer 16777217 (not exactly representable)"),
    DecodingErrorCase(Measure.self, ["value": 9_007_199_254_740_993], .typeMismatch,
                      "at value: expected Double, found integer 9007199254740993 (not exactly representable)"),
    DecodingErrorCase(Measure.self, ["value": true], .typeMismatch, "at value: expected real, found bool true"),
    DecodingErrorCase(Stamp.self, ["when": "2001-01-01"], .typeMismatch, #"at when: expected date, found string "2001-01-01""#),
    DecodingErrorCase(Blob.self, ["bytes": [1]], .typeMismatch, "at bytes: expected data, found array (1 element)"),
    DecodingErrorCase(Stamp.self, ["when": .data(Data([1]))], .typeMismatch, "at when: expected date, found data (1 byte)"),
    DecodingErrorCase(Blob.self, ["bytes": .date(Date(timeIntervalSinceReferenceDate: 0.5))], .typeMismatch,
                      "at bytes: expected data, found date 2001-01-01T00:00:00.5Z"),
    DecodingErrorCase(Link.self, ["url": 5], .typeMismatch, "at url: expected string (URL), found integer 5"),
    DecodingErrorCase(Link.self, ["url": ""], .invalidValue, #"at url: expected URL, found string "" (not a valid URL)"#),
    DecodingErrorCase(Wide.self, ["big": .uid(7)], .typeMismatch, "at big: expected integer, found uid 7"),
    DecodingErrorCase(String.self, .real(-0.5), .typeMismatch, "expected string, found real -0.5"),
    DecodingErrorCase([String].self, ["a", 2], .typeMismatch, "at [1]: expected string, found integer 2"),
    DecodingErrorCase(Bool.self, .string(String(repeating: "x", count: 50)), .typeMismatch,
                      #"expected bool, found string "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…""#),
    DecodingErrorCase(Int.self, .string(String(repeating: "y", count: 41)), .typeMismatch,
                      #"expected integer, found string "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy…""#),
    DecodingErrorCase(Palette.self, ["color": "purple"], .invalidValue,
                      "at color: Cannot initialize Color from invalid String value purple"),
    DecodingErrorCase(Tagged.self, ["ids": [1, 2, "x"], "counts": []], .typeMismatch, #"at ids[2]: expected integer, found string "x""#),
    DecodingErrorCase(Tagged.self, ["ids": [], "counts": [1, 300]], .typeMismatch,
                      "at counts[1]: expected UInt8, found integer 300 (out of range 0...255)"),
    DecodingErrorCase(Tagged.self, ["ids": "1,2", "counts": []], .typeMismatch, #"at ids: expected array, found string "1,2""#),
    DecodingErrorCase([String: UInt8].self, ["k": 300], .typeMismatch, "at k: expected UInt8, found integer 300 (out of range 0...255)"),
    DecodingErrorCase([String: [Bool]].self, ["flags": [true, 1]], .typeMismatch, "at flags[1]: expected bool, found integer 1"),
    DecodingErrorCase([String: Date].self, ["d": 1], .typeMismatch, "at d: expected date, found integer 1"),
    DecodingErrorCase([String: [Double]].self, ["x y": [.real(1), "2"]], .typeMismatch, #"at ["x y"][1]: expected real, found string "2""#),
    DecodingErrorCase(Color.self, 5, .typeMismatch, "expected string, found integer 5"),
    DecodingErrorCase(Probe.self, ["base": 1], .missingValue, #"at extra: missing key "extra" (expected a super decoder's value)"#),
    DecodingErrorCase(Probe.self, ["base": 1, "extra": 1], .missingValue, #"at list: missing key "list" (expected array)"#),
    DecodingErrorCase(Probe.self, ["base": 1, "extra": 1, "list": [:]], .typeMismatch, "at list: expected array, found dict (0 keys)"),
    DecodingErrorCase(Probe.self, ["base": 1, "extra": 1, "list": [1]], .typeMismatch, "at list[0]: expected dict, found integer 1"),
    DecodingErrorCase(Probe.self, ["base": 1, "extra": 1, "list": []], .missingValue, "at list[0]: expected a value, found end of array (0 elements)"),
    DecodingErrorCase([String: Missing].self, ["m": [:]], .missingValue, #"at m.b: missing key "b""#),
    DecodingErrorCase([Absent].self, [1], .missingValue, "at [0]: nothing here"),
    DecodingErrorCase([Shape].self, [["circle": ["radius": 1.0], "point": [:]]], .typeMismatch,
                      "at [0]: Invalid number of keys found, expected one."),
    DecodingErrorCase(Shape.self, ["circle": ["radius": "big"]], .typeMismatch, #"at circle.radius: expected real, found string "big""#),
    DecodingErrorCase(Triple.self, [1, 2], .missingValue, "at [2]: expected integer, found end of array (2 elements)"),
    DecodingErrorCase(Triple.self, [1], .missingValue, "at [1]: expected integer, found end of array (1 element)"),
    DecodingErrorCase(Picky.self, ["n": 1], .invalidValue, "at n: picky says no"),
    DecodingErrorCase([Picky].self, [["n": 1]], .invalidValue, "at [0].n: picky says no"),
    DecodingErrorCase([Refusing].self, [0], .invalidValue, #"at [0]: Failure(reason: "bad")"#),
]

private struct Tagged: Codable, Equatable, Sendable {
    var ids: [Int]
    var counts: [UInt8]
}

/// Recurses through nested unkeyed containers, never through `decode(_:)`.
private struct NestedLists: Decodable {
    var depth: Int
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        depth = try Self.walk(&container)
    }
    static func walk(_ container: inout any UnkeyedDecodingContainer) throws -> Int {
        if container.isAtEnd { return 1 }
        var inner = try container.nestedUnkeyedContainer()
        return 1 + (try walk(&inner))
    }
}

/// Asks for a super decoder, a nested array and a nested dictionary in it, and nil after them.
private struct Probe: Decodable {
    enum Keys: CodingKey { case base, extra, list }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        _ = try c.superDecoder(forKey: .base)
        _ = try c.superDecoder(forKey: .extra)
        var list = try c.nestedUnkeyedContainer(forKey: .list)
        if try list.decodeNil() { return }
        _ = try list.nestedContainer(keyedBy: Keys.self)
    }
}

/// Throws `DecodingError.keyNotFound` itself.
private struct Missing: Decodable {
    enum Keys: CodingKey { case b }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        throw DecodingError.keyNotFound(Keys.b, .init(codingPath: c.codingPath, debugDescription: "no b"))
    }
}

/// Throws `DecodingError.valueNotFound` itself.
private struct Absent: Decodable {
    init(from decoder: any Decoder) throws {
        throw DecodingError.valueNotFound(Int.self, .init(codingPath: decoder.codingPath, debugDescription: "nothing here"))
    }
}

private struct Triple: Decodable {
    init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        for _ in 0..<3 { _ = try c.decode(Int.self) }
    }
}

/// Throws a `DecodingError` of its own, with its own path.
private struct Picky: Decodable {
    enum Keys: CodingKey { case n }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        throw DecodingError.dataCorruptedError(forKey: .n, in: c, debugDescription: "picky says no")
    }
}

/// Throws an error that is not a `DecodingError`.
private struct Refusing: Decodable {
    struct Failure: Error { var reason: String }
    init(from decoder: any Decoder) throws { throw Failure(reason: "bad") }
}

extension CodableTests {
    @Test(arguments: decodingErrorCases)
    func decodingErrors(_ row: DecodingErrorCase) throws {
        let error = try #require(throws: PlistError.self) { try row.run() }
        #expect(error.description == row.expected)
        #expect(error.code == row.code)
    }

    @Test func intKeyedDictionaryWithTextKeyFails() throws {
        let error = try #require(throws: PlistError.self) { try PlistDecoder().decode([Int: String].self, from: ["x": "y"]) }
        #expect(error.code == .typeMismatch)
    }

    @Test func recursionIsBoundedByMaximumDepth() throws {
        var tree: PlistValue = ["children": []]
        for _ in 0..<700 { tree = ["children": [tree]] }
        let error = try #require(throws: PlistError.self) { try PlistDecoder().decode(Node.self, from: tree) }
        #expect(error.code == .tooDeep)
        #expect(error.message == "values nested deeper than 512 levels")

        var shallow = PlistDecoder()
        shallow.options.maximumDepth = 4
        let small: PlistValue = ["children": [["children": [["children": []]]]]]
        #expect(throws: PlistError.self) { try shallow.decode(Node.self, from: small) }
        #expect(try PlistDecoder().decode(Node.self, from: small).depth == 3)
    }

    @Test func nestedContainersAreBoundedByMaximumDepth() throws {
        var tree: PlistValue = []
        for _ in 0..<19 { tree = [tree] }
        #expect(try PlistDecoder().decode(NestedLists.self, from: tree).depth == 20)
        var shallow = PlistDecoder()
        shallow.options.maximumDepth = 8
        let error = try #require(throws: PlistError.self) { try shallow.decode(NestedLists.self, from: tree) }
        #expect(error.description == "at [0][0][0][0][0][0][0][0][0]: values nested deeper than 8 levels")
        #expect(error.code == .tooDeep)
    }

    @Test func parseErrorsSurfaceFromBytes() {
        #expect(throws: PlistError.self) { try PlistDecoder().decode(Int.self, from: Data("not a plist".utf8)) }
    }
}

private struct Node: Decodable {
    var children: [Node]
    var depth: Int { 1 + (children.map(\.depth).max() ?? 0) }
}

// MARK: - Encoding errors

extension CodableTests {
    @Test func int128BeyondPlistRangeIsUnencodable() throws {
        let error = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue(Wide(big: Int128.max)) }
        #expect(error.code == .unencodable)
        #expect(error.description
            == "at big: Int128 170141183460469231731687303715884105727 is outside the plist integer range -9223372036854775808...18446744073709551615")
        let inArray = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue([UInt128(0), UInt128.max]) }
        #expect(inArray.codingPath == "[1]")
    }

    @Test func topLevelValueMustEncodeSomething() throws {
        struct Silent: Encodable { func encode(to encoder: any Encoder) throws {} }
        let error = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue(Silent()) }
        #expect(error.description == "top-level Silent did not encode any values")
        #expect(try PlistEncoder().encodeToValue([Silent()]) == [[:]])
    }

    @Test func mixingContainerKindsIsReported() throws {
        struct Confused: Encodable {
            func encode(to encoder: any Encoder) throws {
                var keyed = encoder.container(keyedBy: PlistCodingKey.self)
                try keyed.encode(1, forKey: .name("a"))
                var list = encoder.unkeyedContainer()
                try list.encode(2)
            }
        }
        let error = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue(["x": Confused()]) }
        #expect(error.description == "at x: requested an unkeyed container after encoding a keyed container")
    }

    @Test func singleValueEncodedTwiceIsReported() throws {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                try c.encode(1)
                try c.encode(2)
            }
        }
        let error = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue([Twice()]) }
        #expect(error.description == "at [0]: cannot encode a single value after encoding a single value")
    }

    @Test func errorsFromEncodedTypesBecomePlistErrors() throws {
        struct Refuses: Encodable {
            struct Nope: Error {}
            var useEncodingError: Bool
            func encode(to encoder: any Encoder) throws {
                if useEncodingError {
                    throw EncodingError.invalidValue(0, .init(codingPath: encoder.codingPath, debugDescription: "not today"))
                }
                throw Nope()
            }
        }
        let typed = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue(["a": [Refuses(useEncodingError: true)]]) }
        #expect(typed.description == "at a[0]: not today")
        #expect(typed.code == .unencodable)
        let other = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue(["b": Refuses(useEncodingError: false)]) }
        #expect(other.description == "at b: Nope()")
        #expect(other.code == .unencodable)
    }

    @Test(.enabled(if: codecWorks(.xml), "needs the XML writer and reader"))
    func roundTripsThroughXML() throws {
        try roundTripThroughBytes(.xml)
    }

    @Test(.enabled(if: codecWorks(.binary), "needs the binary writer and reader"))
    func roundTripsThroughBinary() throws {
        try roundTripThroughBytes(.binary)
    }

    private func roundTripThroughBytes(_ format: PlistFormat) throws {
        let value = Config(name: "prod", servers: [Server(host: "a", port: 1), Server(host: "b", port: 65535)])
        let bytes = try PlistEncoder(outputFormat: format).encode(value)
        #expect(PlistFormat.detect(bytes) == format)
        #expect(try PlistDecoder().decode(Config.self, from: bytes) == value)
        let profile = try PlistDecoder().decode(Profile.self, from: PlistEncoder(outputFormat: format).encode(Profile(name: "Ada", nickname: nil, age: 36)))
        #expect(profile == Profile(name: "Ada", nickname: nil, age: 36))
    }
}

// MARK: - Foundation interoperability

private struct Interop: Codable, Equatable {
    var name: String
    var small: Int8
    var big: UInt64
    var ratio: Double
    var scale: Float
    var on: Bool
    var when: Date
    var blob: Data
    var tags: [String]
    var byID: [Int: String]
    var gaps: [Int?]
    var shape: Shape
    var profile: Profile?
    var missing: Profile?

    static let sample = Interop(
        name: "héllo", small: -8, big: UInt64.max, ratio: 0.1, scale: 1.5, on: true,
        when: Date(timeIntervalSinceReferenceDate: 86_400), blob: Data([0, 1, 2]), tags: ["a", "b"],
        byID: [2: "two"], gaps: [1, nil], shape: .rect(1, 2), profile: Profile(name: "Ada", nickname: nil, age: 36), missing: nil
    )
}

/// `value` with every dictionary's keys sorted, to compare trees from writers that order keys differently.
private func sortedKeys(_ value: PlistValue) -> PlistValue {
    switch value {
    case .array(let a): return .array(a.map(sortedKeys))
    case .dictionary(let d): return .dictionary(d.sortedByKey().mapValues(sortedKeys))
    default: return value
    }
}

extension CodableTests {
    @Test(.enabled(if: codecWorks(.xml) && codecWorks(.binary), "needs both readers and writers"), arguments: PlistFormat.allCases)
    func interoperatesWithFoundation(_ format: PlistFormat) throws {
        let foundationEncoder = PropertyListEncoder()
        foundationEncoder.outputFormat = format == .xml ? .xml : .binary
        let theirs = try foundationEncoder.encode(Interop.sample)
        #expect(try PlistDecoder().decode(Interop.self, from: theirs) == Interop.sample)
        #expect(sortedKeys(try PlistValue(decoding: theirs)) == sortedKeys(try PlistEncoder().encodeToValue(Interop.sample)))

        let ours = try PlistEncoder(outputFormat: format).encode(Interop.sample)
        #expect(try PropertyListDecoder().decode(Interop.self, from: ours) == Interop.sample)
    }
}

/// Whether this build's reader and writer for `format` work yet (they are written in parallel).
private func codecWorks(_ format: PlistFormat) -> Bool {
    guard let bytes = try? PlistValue.bool(true).encoded(as: format) else { return false }
    return (try? PlistValue(decoding: bytes)) == .bool(true)
}

// MARK: - Super coders

/// A class hierarchy that uses every kind of super coder.
private class Animal: Codable {
    var legs: Int
    init(legs: Int) { self.legs = legs }
}

private final class Dog: Animal {
    var name: String
    enum Keys: CodingKey { case breed, extra, list }

    init(name: String, legs: Int) {
        self.name = name
        super.init(legs: legs)
    }

    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        name = try c.decode(String.self, forKey: .breed)
        try super.init(from: c.superDecoder())
        let extra = try Animal(from: c.superDecoder(forKey: .extra))
        var list = try c.nestedUnkeyedContainer(forKey: .list)
        let listed = try Animal(from: list.superDecoder())
        #expect(extra.legs == legs && listed.legs == legs)
    }

    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(name, forKey: .breed)
        try super.encode(to: c.superEncoder())
        try super.encode(to: c.superEncoder(forKey: .extra))
        var list = c.nestedUnkeyedContainer(forKey: .list)
        try super.encode(to: list.superEncoder())
    }
}

// MARK: - Foundation's behaviour where users rely on it (issue 14)

/// Writes `top.first` and `top.second` through two nested containers for the same key, as
/// Foundation's `testEncodingMultipleNestedContainersWithTheSameTopLevelKey` does.
private struct SplitTop: Codable, Equatable {
    var first: String
    var second: String
    enum TopKeys: String, CodingKey { case top }
    enum FirstKeys: String, CodingKey { case first }
    enum SecondKeys: String, CodingKey { case second }

    init(first: String, second: String) {
        self.first = first
        self.second = second
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: TopKeys.self)
        first = try c.nestedContainer(keyedBy: FirstKeys.self, forKey: .top).decode(String.self, forKey: .first)
        second = try c.nestedContainer(keyedBy: SecondKeys.self, forKey: .top).decode(String.self, forKey: .second)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: TopKeys.self)
        var one = c.nestedContainer(keyedBy: FirstKeys.self, forKey: .top)
        try one.encode(first, forKey: .first)
        var two = c.nestedContainer(keyedBy: SecondKeys.self, forKey: .top)
        try two.encode(second, forKey: .second)
    }
}

/// A class whose subclass a metatype can name dynamically (Foundation's `Person`/`Employee`).
private class Person: Codable {
    var name: String
    init(name: String) { self.name = name }
}

private final class Employee: Person {
    var badge: Int
    enum Keys: CodingKey { case badge }

    init(name: String, badge: Int) {
        self.badge = badge
        super.init(name: name)
    }

    required init(from decoder: any Decoder) throws {
        badge = try decoder.container(keyedBy: Keys.self).decode(Int.self, forKey: .badge)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(badge, forKey: .badge)
        try super.encode(to: encoder)
    }
}

extension CodableTests {
    @Test func nestedKeyedContainersForOneKeyMerge() throws {
        let value = SplitTop(first: "Johnny Appleseed", second: "appleseed@apple.com")
        let tree = try PlistEncoder().encodeToValue(value)
        #expect(tree == ["top": ["first": "Johnny Appleseed", "second": "appleseed@apple.com"]])
        #expect(try PlistDecoder().decode(SplitTop.self, from: tree) == value)
        // Foundation's expected XML, byte for byte.
        let xml = try PlistEncoder(outputFormat: .xml).encode(value)
        #expect(String(decoding: xml, as: UTF8.self) == """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>top</key>
            \t<dict>
            \t\t<key>first</key>
            \t\t<string>Johnny Appleseed</string>
            \t\t<key>second</key>
            \t\t<string>appleseed@apple.com</string>
            \t</dict>
            </dict>
            </plist>

            """)
    }

    @Test func nestedUnkeyedContainersAndSuperEncodersForOneKeyMerge() throws {
        struct Merged: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: PlistCodingKey.self)
                var a = c.nestedUnkeyedContainer(forKey: .name("list"))
                try a.encode(1)
                var b = c.nestedUnkeyedContainer(forKey: .name("list"))
                try b.encode(2)
                try a.encode(3)   // the first container stays usable

                var viaSuper = c.superEncoder(forKey: .name("obj")).container(keyedBy: PlistCodingKey.self)
                try viaSuper.encode("a", forKey: .name("x"))
                var nested = c.nestedContainer(keyedBy: PlistCodingKey.self, forKey: .name("obj"))
                try nested.encode("b", forKey: .name("y"))
                var again = c.superEncoder(forKey: .name("obj")).container(keyedBy: PlistCodingKey.self)
                try again.encode("c", forKey: .name("z"))

                var s1 = c.superEncoder().container(keyedBy: PlistCodingKey.self)
                try s1.encode(1, forKey: .name("p"))
                var s2 = c.superEncoder().container(keyedBy: PlistCodingKey.self)
                try s2.encode(2, forKey: .name("q"))
            }
        }
        let tree = try PlistEncoder().encodeToValue(Merged())
        #expect(tree == ["list": [1, 2, 3], "obj": ["x": "a", "y": "b", "z": "c"], "super": ["p": 1, "q": 2]])
    }

    @Test func nestedContainerJoinsAValueEncodedBeforeForItsKey() throws {
        struct Later: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: PlistCodingKey.self)
                try c.encode(["a": 1], forKey: .name("dict"))
                try c.encode([1], forKey: .name("list"))
                var d = c.nestedContainer(keyedBy: PlistCodingKey.self, forKey: .name("dict"))
                try d.encode(2, forKey: .name("b"))
                var l = c.nestedUnkeyedContainer(forKey: .name("list"))
                try l.encode(2)
            }
        }
        #expect(try PlistEncoder().encodeToValue(Later()) == ["dict": ["a": 1, "b": 2], "list": [1, 2]])
    }

    @Test func anotherContainerKindForOneKeyIsReported() throws {
        struct KeyedThenUnkeyed: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: PlistCodingKey.self)
                var keyed = c.nestedContainer(keyedBy: PlistCodingKey.self, forKey: .name("top"))
                try keyed.encode("Johnny", forKey: .name("first"))
                var unkeyed = c.nestedUnkeyedContainer(forKey: .name("top"))
                try unkeyed.encode("second")
            }
        }
        struct UnkeyedThenKeyed: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: PlistCodingKey.self)
                var unkeyed = c.nestedUnkeyedContainer(forKey: .name("top"))
                try unkeyed.encode("first")
                var keyed = c.nestedContainer(keyedBy: PlistCodingKey.self, forKey: .name("top"))
                try keyed.encode("Johnny", forKey: .name("second"))
            }
        }
        struct ScalarThenKeyed: Encodable {
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: PlistCodingKey.self)
                try c.encode(5, forKey: .name("top"))
                var keyed = c.nestedContainer(keyedBy: PlistCodingKey.self, forKey: .name("top"))
                try keyed.encode("Johnny", forKey: .name("first"))
            }
        }
        let first = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue(["m": KeyedThenUnkeyed()]) }
        #expect(first.code == .unencodable)
        #expect(first.codingPath == "m.top")
        #expect(first.description == "at m.top: requested an unkeyed container after encoding a keyed container")
        let second = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue(UnkeyedThenKeyed()) }
        #expect(second.description == "at top: requested a keyed container after encoding an unkeyed container")
        let third = try #require(throws: PlistError.self) { try PlistEncoder().encodeToValue(ScalarThenKeyed()) }
        #expect(third.description == "at top: requested a keyed container after encoding integer 5")
    }

    @Test func decodeUsesTheDynamicMetatype() throws {
        let data = try PlistEncoder().encode(Employee(name: "Ada", badge: 7))
        let metatype: Person.Type = Employee.self
        let decoded = try PlistDecoder().decode(metatype, from: data)
        #expect(type(of: decoded) == Employee.self)
        #expect((decoded as? Employee)?.badge == 7 && decoded.name == "Ada")

        // Nested values too, where the metatype reaches the decoder. (`KeyedDecodingContainer`,
        // the standard library's wrapper, passes `T.self` on, so no decoder sees it there.)
        struct Holder: Decodable {
            var listed: Person
            var single: Person
            enum Keys: CodingKey { case listed, single }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: Keys.self)
                var list = try c.nestedUnkeyedContainer(forKey: .listed)
                listed = try list.decode(metatypeOfEmployee)
                single = try c.superDecoder(forKey: .single).singleValueContainer().decode(metatypeOfEmployee)
            }
        }
        let employee: PlistValue = ["badge": 7, "name": "Ada"]
        let holder = try PlistDecoder().decode(Holder.self, from: ["listed": [employee], "single": employee])
        #expect(holder.listed is Employee)
        #expect(holder.single is Employee)
    }
}

private let metatypeOfEmployee: Person.Type = Employee.self
