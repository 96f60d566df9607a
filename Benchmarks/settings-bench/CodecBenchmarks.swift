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
}

enum BenchError: Error {
    case mismatch(String)
}
