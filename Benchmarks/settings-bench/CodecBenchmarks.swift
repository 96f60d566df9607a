import Foundation
import SettingsPlist

/// The plist codec workloads: read and write in both formats, and Codable, each beside Foundation.
enum CodecBenchmarks {
    static func run(_ h: Harness, sizes: [(String, Int)]) throws {
        for (label, target) in sizes {
            let value = Generator.settings(targetBytes: target)
            let xml = try value.encoded(as: .xml)
            let binary = try value.encoded(as: .binary)
            print("# \(label): XML \(xml.count) bytes, binary \(binary.count) bytes")
            let foundationTree = try PropertyListSerialization.propertyList(from: xml, format: nil)

            try h.throughput("xml-read-\(label)", "Settings", bytes: xml.count) { blackHole(try PlistValue(decoding: xml)) }
            try h.throughput("xml-read-\(label)", "PropertyListSerialization", bytes: xml.count) {
                blackHole(try PropertyListSerialization.propertyList(from: xml, format: nil))
            }
            try h.throughput("binary-read-\(label)", "Settings", bytes: binary.count) { blackHole(try PlistValue(decoding: binary)) }
            try h.throughput("binary-read-\(label)", "PropertyListSerialization", bytes: binary.count) {
                blackHole(try PropertyListSerialization.propertyList(from: binary, format: nil))
            }
            try h.throughput("xml-write-\(label)", "Settings", bytes: xml.count) { blackHole(try value.encoded(as: .xml)) }
            try h.throughput("xml-write-\(label)", "PropertyListSerialization", bytes: xml.count) {
                blackHole(try PropertyListSerialization.data(fromPropertyList: foundationTree, format: .xml, options: 0))
            }
            try h.throughput("binary-write-\(label)", "Settings", bytes: binary.count) { blackHole(try value.encoded(as: .binary)) }
            try h.throughput("binary-write-\(label)", "PropertyListSerialization", bytes: binary.count) {
                blackHole(try PropertyListSerialization.data(fromPropertyList: foundationTree, format: .binary, options: 0))
            }
        }
    }

    /// Runs one codec operation `count` times on the 1 MB workload, for callgrind:
    /// `valgrind --tool=callgrind .build/release/settings-bench --profile-codec binary-read 10`.
    static func profile(_ operation: String, count: Int) throws {
        let value = Generator.settings(targetBytes: 1_000_000)
        let xml = try value.encoded(as: .xml)
        let binary = try value.encoded(as: .binary)
        for _ in 0 ..< count {
            switch operation {
            case "binary-read": blackHole(try PlistValue(decoding: binary))
            case "xml-read": blackHole(try PlistValue(decoding: xml))
            case "binary-write": blackHole(try value.encoded(as: .binary))
            case "xml-write": blackHole(try value.encoded(as: .xml))
            default: throw BenchError.mismatch("unknown operation \(operation)")
            }
        }
    }

    /// Codable: an array of models (about `targetBytes` of XML) decoded and encoded.
    static func runCodable(_ h: Harness, label: String, targetBytes: Int) throws {
        let count = max(1, targetBytes / 560)
        let models = Model.many(count)
        let foundationEncoder = PropertyListEncoder()
        foundationEncoder.outputFormat = .xml
        let xml = try foundationEncoder.encode(models)
        foundationEncoder.outputFormat = .binary
        let binary = try foundationEncoder.encode(models)
        print("# codable-\(label): \(count) models, XML \(xml.count) bytes, binary \(binary.count) bytes")
        let ours = PlistDecoder()
        guard try ours.decode([Model].self, from: xml) == models else { throw BenchError.mismatch("codable decode") }

        try h.throughput("codable-decode-xml-\(label)", "Settings", bytes: xml.count) { blackHole(try ours.decode([Model].self, from: xml)) }
        try h.throughput("codable-decode-xml-\(label)", "PropertyListDecoder", bytes: xml.count) {
            blackHole(try PropertyListDecoder().decode([Model].self, from: xml))
        }
        try h.throughput("codable-decode-binary-\(label)", "Settings", bytes: binary.count) { blackHole(try ours.decode([Model].self, from: binary)) }
        try h.throughput("codable-decode-binary-\(label)", "PropertyListDecoder", bytes: binary.count) {
            blackHole(try PropertyListDecoder().decode([Model].self, from: binary))
        }
        var xmlEncoder = PlistEncoder()
        xmlEncoder.outputFormat = .xml
        var binaryEncoder = PlistEncoder()
        binaryEncoder.outputFormat = .binary
        try h.throughput("codable-encode-xml-\(label)", "Settings", bytes: xml.count) { blackHole(try xmlEncoder.encode(models)) }
        try h.throughput("codable-encode-xml-\(label)", "PropertyListEncoder", bytes: xml.count) {
            let e = PropertyListEncoder()
            e.outputFormat = .xml
            blackHole(try e.encode(models))
        }
        try h.throughput("codable-encode-binary-\(label)", "Settings", bytes: binary.count) { blackHole(try binaryEncoder.encode(models)) }
        try h.throughput("codable-encode-binary-\(label)", "PropertyListEncoder", bytes: binary.count) {
            let e = PropertyListEncoder()
            e.outputFormat = .binary
            blackHole(try e.encode(models))
        }
    }
}

enum BenchError: Error {
    case mismatch(String)
}
