import Foundation
import SettingsPlist

/// A small, fast, seedable PRNG (SplitMix64), so every run generates the same data.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Deterministic settings-shaped plists: sections of mixed preferences, the way real app
/// settings files look (strings incl. non-ASCII and text needing escapes, numbers, flags,
/// dates, small data blobs, nested arrays and dictionaries).
enum Generator {
    static let words = ["window", "toolbar", "recent", "sync", "theme", "font", "editor", "panel",
                        "network", "proxy", "timeout", "accent", "history", "export", "cache", "layout"]
    static let texts = ["Grüße aus Köln", "日本語のテキスト", "Ünïcödé ✓ — “quotes”", "a < b && c > d",
                        "Tom & Jerry's \"show\"", "plain ascii value", "/usr/local/share/app/data",
                        "https://example.com/path?q=1&r=2", "emoji 🎉🚀", "tab\tand\nnewline"]

    /// A value whose XML encoding is roughly `targetBytes` long.
    static func settings(targetBytes: Int, seed: UInt64 = 42) -> PlistValue {
        var rng = SplitMix64(seed: seed)
        var root = PlistDictionary()
        var i = 0
        // One section is about 1.3 KB of XML.
        let sections = max(1, targetBytes / 1300)
        while i < sections {
            root["\(words[i % words.count]).\(i)"] = section(&rng, index: i)
            i += 1
        }
        return .dictionary(root)
    }

    static func section(_ rng: inout SplitMix64, index: Int) -> PlistValue {
        var d = PlistDictionary()
        d["enabled"] = .bool(rng.next() % 2 == 0)
        d["title"] = .string(texts[Int(rng.next() % UInt64(texts.count))])
        d["count"] = .integer(PlistInteger(Int64(rng.next() % 100_000) - 50_000))
        d["bigCount"] = .integer(PlistInteger(rng.next() >> 3))
        d["ratio"] = .real(Double(rng.next() % 1_000_000) / 997.0)
        d["modified"] = .date(Date(timeIntervalSinceReferenceDate: Double(700_000_000 + Int(rng.next() % 100_000_000))))
        d["blob"] = .data(Data((0..<(16 + Int(rng.next() % 48))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
        d["path"] = .string("/Users/someone/Documents/\(words[index % words.count])/file-\(index).txt")
        d["recent"] = .array((0..<4).map { _ in .string(words[Int(rng.next() % UInt64(words.count))] + "-" + String(rng.next() % 1000)) })
        d["sizes"] = .array((0..<5).map { _ in .integer(PlistInteger(Int64(rng.next() % 4096))) })
        d["window"] = [
            "x": .integer(PlistInteger(Int64(rng.next() % 2000))),
            "y": .integer(PlistInteger(Int64(rng.next() % 1200))),
            "zoom": .real(Double(rng.next() % 300) / 100),
            "visible": .bool(rng.next() % 3 != 0),
            "name": .string(texts[Int(rng.next() % UInt64(texts.count))]),
        ]
        return .dictionary(d)
    }
}

/// The model used by the Codable workloads: about the shape of a settings record.
struct Model: Codable, Equatable {
    struct Window: Codable, Equatable {
        var x: Int
        var y: Int
        var zoom: Double
    }

    var id: Int
    var name: String
    var enabled: Bool
    var ratio: Double
    var count: Int64
    var modified: Date
    var tags: [String]
    var path: String
    var window: Window?
    var note: String?

    static func many(_ n: Int, seed: UInt64 = 7) -> [Model] {
        var rng = SplitMix64(seed: seed)
        return (0..<n).map { i in
            Model(
                id: i,
                name: Generator.texts[Int(rng.next() % UInt64(Generator.texts.count))],
                enabled: rng.next() % 2 == 0,
                ratio: Double(rng.next() % 1_000_000) / 997.0,
                count: Int64(rng.next() % 1_000_000) - 500_000,
                modified: Date(timeIntervalSinceReferenceDate: Double(700_000_000 + Int(rng.next() % 100_000_000))),
                tags: (0..<3).map { _ in Generator.words[Int(rng.next() % UInt64(Generator.words.count))] },
                path: "/srv/app/\(Generator.words[i % Generator.words.count])/\(i)",
                window: rng.next() % 4 == 0 ? nil : Window(x: Int(rng.next() % 2000), y: Int(rng.next() % 1200), zoom: 1.25),
                note: rng.next() % 2 == 0 ? "note \(i)" : nil
            )
        }
    }
}
