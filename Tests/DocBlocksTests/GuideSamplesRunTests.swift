#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SettingsTestSupport
import Testing

/// The samples of Docs/Observing.md, run in the guide's order as a reader who copies them into one
/// program runs them: every one ends (no `for await` waits for ever), and they print the same on
/// every run (the first sample's store is a fresh one, not a file a previous run wrote).
@Suite(.serialized)
struct GuideSamplesRunTests {
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
