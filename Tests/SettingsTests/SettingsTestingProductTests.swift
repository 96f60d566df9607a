import Foundation
import Settings
import SettingsPlist
import SettingsTestSupport
import SettingsTesting
import Testing

private enum Theme: String, SettingsValue, Equatable, Sendable { case light, dark }

private struct ConformanceWindow: Codable, Equatable, Sendable, SettingsValue {
    var width = 800
    var title = "Main"
}

private struct ConformanceProfile: Codable, Equatable, SettingsModel {
    var name = "Ada"
    var window = ConformanceWindow()
}

/// A model whose hand-written archive forgets a field.
private struct Forgetful: SettingsModel, Equatable {
    var kept = 1
    var forgotten = "x"
    init() {}
    init(kept: Int, forgotten: String) {
        self.kept = kept
        self.forgotten = forgotten
    }
    func archive() throws(SettingsError) -> PlistDictionary { ["kept": .integer(PlistInteger(Int64(kept)))] }
    static func unarchive(_ dictionary: PlistDictionary, issues: inout [ModelFieldIssue]) -> Forgetful {
        var model = Forgetful()
        if let value = dictionary["kept"]?.intValue { model.kept = value }
        if case .string(let s)? = dictionary["forgotten"] { model.forgotten = s }
        return model
    }
}

private struct VolumeSettings {
    @Setting("volume", default: 0.5, store: .inMemory(), rules: .clamp(0...1)) var volume: Double
    @Setting("theme", default: Theme.light, store: .inMemory()) var theme: Theme
}

private struct BrokenDefaultSettings {
    @Setting("volume", default: 5.0, store: .inMemory(), rules: .clamp(0...1)) var volume: Double
}

/// The SettingsTesting product: what a user's own tests use.
struct SettingsTestingProductTests {
    @Test func eachStoreRecordsItsOwnDiagnostics() {
        let first = SettingsStore.inMemory(["volume": "loud"])
        let second = SettingsStore.inMemory()
        let firstRecorder = SettingsDiagnosticsRecorder(recording: first)
        let secondRecorder = SettingsDiagnosticsRecorder(recording: second)
        let volume: Double = first.value("volume", default: 0.5)
        #expect(volume == 0.5)
        #expect(firstRecorder.diagnostics(of: .typeMismatch).count == 1)
        #expect(secondRecorder.diagnostics.isEmpty)
        #expect(firstRecorder.description.hasPrefix("SettingsDiagnosticsRecorder[1 diagnostic]\ntypeMismatch: "))
        firstRecorder.removeAll()
        #expect(firstRecorder.diagnostics.isEmpty)
    }

    @Test func valuesAndTransformersThatRoundTripPass() throws {
        try SettingsConformance.checkRoundTrip(of: [Theme.light, .dark])
        try SettingsConformance.checkRoundTrip(of: [ConformanceWindow(), ConformanceWindow(width: 0, title: "ünïcödé\n\t")])
        try SettingsConformance.checkRoundTrip(of: [URL(string: "https://example.com/a?b=c")!])
    }

    @Test func aTransformerThatLosesInformationFails() {
        let truncating = SettingsTransformer<Double>(
            typeName: "TruncatedDouble", encode: { .integer(PlistInteger(Int64($0))) }, decode: { $0.intValue.map(Double.init) })
        let failure = #expect(throws: SettingsConformanceFailure.self) {
            try SettingsConformance.checkRoundTrip(of: [1.0, 2.5], through: truncating)
        }
        #expect(failure?.subject == "TruncatedDouble")
        #expect(failure?.problems == ["2.5: read back from xml as 2.0", "2.5: read back from binary as 2.0"])
    }

    @Test func aCodableModelPassesAndAForgetfulOneFails() throws {
        try SettingsConformance.checkModel([ConformanceProfile(), ConformanceProfile(name: "Grace", window: ConformanceWindow(width: 1, title: "t"))])
        let failure = #expect(throws: SettingsConformanceFailure.self) {
            try SettingsConformance.checkModel([Forgetful(kept: 2, forgotten: "y")])
        }
        #expect(failure?.problems.contains { $0.contains("read back from xml") } == true, "\(String(describing: failure))")
    }

    @Test func aContainersSchemaIsCheckedAgainstItsDefaults() throws {
        try SettingsConformance.checkSchema(of: VolumeSettings())
        let failure = #expect(throws: SettingsConformanceFailure.self) {
            try SettingsConformance.checkSchema(of: BrokenDefaultSettings())
        }
        #expect(failure?.problems.count == 1)
        #expect(failure?.description.contains("volume") == true, "\(String(describing: failure))")
    }
}
