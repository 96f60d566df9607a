import Foundation
import Observation
import Settings
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The samples of Docs/Observing.md (and the settings Docs/Persistence.md shares), compiled and run.

struct ObservingGuideSettings {
    @Setting var volume: Double
    @Setting var theme: String
    init(store: SettingsStore) {
        _volume = Setting("volume", default: 0.5, store: store)
        _theme = Setting("theme", default: "system", store: store)
    }
}

/// Docs/Observing.md: its samples (and the settings Docs/Persistence.md shares), compiled and run;
/// serialized, as the run of the guide's own samples captures this process's standard output.
@Suite("Guide: Observing", .serialized)
struct ObservingGuideTests {
    // MARK: - The samples, on in-memory stores

    @Test func didSetStyleCallback() {
        let settings = ObservingGuideSettings(store: .inMemory())
        let printed = Received<String>()
        let observation = settings.$volume.onChange { new, old in
            printed.append("volume \(old) -> \(new)")
        }
        settings.volume = 0.8
        observation.cancel()
        settings.volume = 0.1
        #expect(printed.all == ["volume 0.5 -> 0.8"])
    }

    @Test func observationsKeptInASet() {
        let store = SettingsStore.inMemory()
        let settings = ObservingGuideSettings(store: store)
        var observations = Set<SettingsObservation>()
        let seen = Received<String>()
        settings.$theme.onChange { new, _ in seen.append(new) }.store(in: &observations)
        store.onChange { seen.append("\($0)") }.store(in: &observations)
        settings.theme = "dark"
        #expect(Set(seen.all) == ["dark", "write: theme"])
        observations.removeAll()
        settings.theme = "light"
        #expect(seen.all.count == 2)
    }

    @Test func namespaceObserverAndAffects() {
        let store = SettingsStore.inMemory()
        let changes = Received<SettingsChange>()
        let all = store.onChange { changes.append($0) }
        store["Network/timeout"] = 5
        #expect(changes.all.first?.affects("Network") == true)
        #expect(changes.all.first?.affects("Network/timeout") == true)
        #expect(changes.all.first?.affects("theme") == false)
        _ = all
    }

    // MARK: - The guide's own samples, run
    // The samples of Docs/Observing.md, run in the guide's order as a reader who copies them into one
    // program runs them: every one ends (no `for await` waits for ever), and they print the same on
    // every run (the first sample's store is a fresh one, not a file a previous run wrote).

    /// Runs `body` with this process's standard output going to a file, and returns what was
    /// printed. Other tests (and the test runner's progress lines) may print meanwhile: check with
    /// `contains`, never for equality. Everything captured is written to the real standard output
    /// afterwards, so nothing printed meanwhile is lost, only delayed.
    static func capturingStandardOutput(_ body: () async throws -> Void) async throws -> String {
        let directory = try TemporaryDirectory()
        let path = directory.url.appending(path: "stdout").path
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(file >= 0)
        fflush(nil)   // every stream: `stdout` itself is a C global Swift 6 does not let us name
        let saved = dup(1)
        dup2(file, 1)
        close(file)
        func restore() -> String {
            fflush(nil)
            dup2(saved, 1)
            close(saved)
            let printed = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            print(printed, terminator: "")
            return printed
        }
        do {
            try await body()
        } catch {
            _ = restore()
            throw error
        }
        return restore()
    }

    @Test(.timeLimit(hangLimit))  // a hang ends the run; a busy machine (the whole suite on 2 cores) does not
    func observingSamplesEndAndSayTheSameOnEveryRun() async throws {
        let printed = try await Self.capturingStandardOutput {
            for sample in samplesOfObserving { try await sample() }
            // The first sample again, as a second run of a program that copied it.
            try await samplesOfObserving[0]()
        }
        let lines = printed.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0 == "volume 0.5 -> 0.8" }.count == 2, "\(printed)")
        #expect(lines.contains("write [theme]"), "\(printed)")
        #expect(lines.contains("Optional(45)"), "\(printed)")
    }
}
