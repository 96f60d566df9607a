import Foundation
import Testing
import Settings
import SettingsTestSupport

// Hand-written types for the checks of Docs/Settings.md and Docs/TypesAndTransformers.md that
// their samples cannot show (see those suites).

extension Guide {
    /// The README's own type with a transformer (`Temperature` in its samples).
    struct Temperature: Sendable, Equatable {
        var celsius: Double
    }
}

extension SettingsTransformer where Value == Guide.Temperature {
    static var celsius: SettingsTransformer<Guide.Temperature> {
        SettingsTransformer(typeName: "Temperature", encode: { .real($0.celsius) },
                            decode: { $0.doubleValue.map(Guide.Temperature.init(celsius:)) })
    }
}

/// Bound to an in-memory store by each check; never `SettingsStore.shared` (see GuideRun).
struct ReadmeSettings {
    @Setting("autoPlay", default: false, store: .inMemory()) var autoPlay: Bool
    @Setting("Network/timeout", default: 30.0, store: .inMemory()) var timeout: Double
    @Setting("Network/proxy", store: .inMemory()) var proxy: String?
    @Setting("accent", default: SettingsColor(hex: "#FF8800")!, store: .inMemory()) var accent: SettingsColor
    @Setting("outside", default: Guide.Temperature(celsius: 20), store: .inMemory(), transformer: .celsius) var outside: Guide.Temperature
    @Setting("retries", store: .inMemory(), rules: .whenNil(use: 3).ensure(that: { $0 >= 1 }, otherwise: 1)) var retries: Int?
    @Setting("volume", default: 0.5, store: .inMemory(), rules: .clamp(0...1)) var volume: Double
}

/// README.md's samples, run as written: the quick start on `SettingsStore.shared` with Getting
/// started's `Defaults.plist` (the README sends the reader there for it), then the plist layer.
extension GuideSuites {
@Suite("Guide: README")
struct ReadmeGuideTests {
    @Test func samplesRunAsWritten() async throws {
        let defaults = try GettingStartedGuideTests.defaultsPlist()
        let run = try await GuideRun.run(setUp: { try $0.write("Defaults.plist", defaults) }) {
            for sample in samplesOfREADME { try await sample() }
        }
        // "the missing ones are reported": the proxy has no default in code or in the file.
        #expect(run.warned.contains("warning: setting 'Network/proxy' (String?, AppSettings.proxy) has no default"), "\(run.warned)")
        #expect(run.shared?["autoPlay"] == true)   // flushed to the shared store's file
        // The plist layer: Defaults.plist read, and written again as binary.
        #expect(try run.directory.bytes("Defaults.bplist").starts(with: Array("bplist00".utf8)))
        #expect(try run.file("Defaults.bplist") == run.file("Defaults.plist"))
    }
}
}
