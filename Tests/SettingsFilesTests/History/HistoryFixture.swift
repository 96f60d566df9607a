import Foundation
import SettingsPlist
@testable import SettingsFiles
import SettingsTestSupport

/// A settings file's history kept by hand, in a directory of the test's own: generation `i`
/// holds `["i": i]`, every one kept by ``writer``, 20 at most.
struct HistoryFixture {
    static let writer = SettingsProvenance(origin: .write, process: "MyApp", pid: 1, date: Date(timeIntervalSince1970: 0))

    /// The bytes of generation `i`'s file.
    static func bytes(_ i: Int) throws -> Data {
        try PlistValue.dictionary(["i": .integer(PlistInteger(Int64(i)))]).encoded(as: .binary)
    }

    let directory: TemporaryDirectory
    /// The settings file whose history this is.
    let target: String
    let limits = PlistHistory.Limits(count: 20)

    init() throws {
        directory = try TemporaryDirectory()
        target = directory.path("settings.plist")
    }

    /// Keeps generation `i` as a writer that knows `known` of the journal.
    @discardableResult
    func keep(_ i: Int, provenance: PlistDictionary? = nil, pending: Bool = false, known: inout PlistHistory.Known) throws -> Int? {
        try PlistHistory.keep(Self.bytes(i), changed: [["i"]], by: Self.writer, for: target, limits: limits,
                              provenance: provenance, pending: pending, known: &known)
    }
}
