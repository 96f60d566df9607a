import Foundation
import Settings
import SettingsTestSupport
import Testing

// Attacks on model files and `@StoredModel` (issue 11, item 1), as a hostile user and a careless
// program would make them: unusual Codable shapes, hostile files, odd `$version`s. Each test
// checks that nothing crashes, problems are reported clearly, and what is stored survives.

/// Enums with associated values, a value that is a payload-free case, and an enum-keyed dictionary.
struct AttackShapes: SettingsModel, Codable, Equatable {
    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case rect(w: Int, h: Int)
        case empty
    }
    enum Kind: String, Codable, CodingKeyRepresentable {
        case alpha, beta
    }
    var name = "shapes"
    var shape: Shape = .circle(radius: 1)
    var byKind: [Kind: Int] = [:]
    var byNumber: [Int: String] = [:]
}

/// Optionals of arrays, Sets, Date, Data and URL fields.
struct AttackScalars: SettingsModel, Codable, Equatable {
    var tags: [String]?
    var unique: Set<String> = []
    var when = Date(timeIntervalSince1970: 0)
    var blob = Data()
    var link = URL(filePath: "/")
    var count = 0
}

/// An array of optionals: plists have no null.
struct AttackOptionalElements: SettingsModel, Codable, Equatable {
    var slots: [String?] = []
}

/// A set of structs: its order is the hashing order of the process that writes it.
struct AttackSetFleet: SettingsModel, Codable, Equatable {
    struct Member: Codable, Hashable {
        var host: String
        var port: Int
    }
    var name = "set"
    var members: Set<Member> = []
}

/// A nested value whose own decoding code throws, and one decoded through `superDecoder`.
struct AttackCustom: SettingsModel, Codable, Equatable {
    struct Range: Codable, Equatable {
        var low = 0
        var high = 1
        init() {}
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            low = try c.decode(Int.self, forKey: .low)
            high = try c.decode(Int.self, forKey: .high)
            if low > high { throw DecodingError.dataCorruptedError(forKey: .high, in: c, debugDescription: "high below low") }
        }
    }
    struct Wrapped: Codable, Equatable {
        var inner = 0
        init() {}
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            inner = try Int(from: c.superDecoder(forKey: .inner))
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try inner.encode(to: c.superEncoder(forKey: .inner))
        }
        enum CodingKeys: String, CodingKey { case inner }
    }
    var range = Range()
    var wrapped = Wrapped()
    var label = "custom"
}

/// A recursive value: a linked list nested as deep as the program likes.
struct AttackDeep: SettingsModel, Codable, Equatable {
    indirect enum Chain: Codable, Equatable, Sendable {
        case end
        case link(Int, Chain)
    }
    var chain: Chain = .end
    var label = "deep"
}

/// A model that reports on what the file holds, at schema version 2.
struct AttackVersioned: SettingsModel, Codable, Equatable {
    var value = 0
    var label = "v"
    static let migrations = SettingsMigrations { m in
        m.convert("value", inVersion: 1) { old in old.intValue.map { .integer(PlistInteger(Int64($0 * 10))) } }
        m.step(toVersion: 2) { _ in }
    }
}

/// A model the attacks use when the shape does not matter.
struct AttackPlain: SettingsModel, Codable, Equatable {
    var name = "Guest"
    var volume = 0.5
}

/// The dictionary a model file holds.
func stored(_ url: URL) throws -> PlistDictionary {
    try #require(try PlistValue(contentsOf: url).dictionaryValue)
}

/// The names of the `NAME.corrupt-*` copies a save moved aside in `dir`.
func corruptCopies(in dir: TemporaryDirectory, of name: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("\(name).corrupt-") }
}

/// A binary plist of `objects` (already encoded), the first one at the top, with one-byte
/// references and offsets.
func binaryPlist(_ objects: [[UInt8]]) -> [UInt8] {
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
        offsets.append(out.count)
        out += object
    }
    let table = out.count
    let offsetSize = offsets.last.map { $0 > 255 ? 2 : 1 } ?? 1
    for offset in offsets {
        out += offsetSize == 2 ? [UInt8(offset >> 8), UInt8(offset & 0xFF)] : [UInt8(offset)]
    }
    out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), 1]
    for value in [UInt64(objects.count), 0, UInt64(table)] {
        out += (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
    return out
}
