import SettingsFiles
import Foundation
@testable import Settings
import SettingsPlist
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real faults against the journal of issue 29 (one generation file per save, the log written
/// whole only now and then): writers killed mid-save, and the tool beside a running program.
struct HistoryJournalFaultsTests {
    /// A writer killed again and again while saving: every later save still keeps its
    /// generation, `settings history` and `settings explain` run and show the value left, and no
    /// generation claims a hand edit nobody made.
    @Test func killedWritersLeaveHistoryAndExplainWorking() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        for round in 0..<6 {
            let (printed, end) = try await Fault.signalled(["crash-writer", url.path], with: SIGKILL, after: 10 + round * 7)
            #expect(printed.count == 10 + round * 7)
            let acknowledged = (printed + end.lines).compactMap { Int($0) }.last ?? 0
            let saved = try #require(try PlistValue(contentsOf: url)["counter"]?.intValue)
            #expect(saved >= acknowledged)
            let history = try await HistoryAndProvenanceTests.runTool(["history", url.path])
            #expect(history.status == 0, "round \(round): \(history.output)")
            let explained = try await HistoryAndProvenanceTests.runTool(["explain", url.path, "counter"])
            #expect(explained.status == 0, "round \(round): \(explained.output)")
            // Who set it is not asserted here: a kill between the generation and the replace
            // makes it "changed on disk" (HistoryJournalAttackTests.aKilledSavesEntriesDoNotHideWhoSetTheValuesLeft).
            #expect(explained.output.contains("counter = \(saved)"), "round \(round): \(explained.output)")
        }
        // Nobody edited the file by hand: no generation says so.
        let handEdits = try PlistHistory.summaries(for: url.path).filter { $0.writer.origin == .changedOnDisk }
        #expect(handEdits.isEmpty, "generations claiming a hand edit: \(handEdits.map(\.number))")
        // Saves after all that still keep their generations, numbered after every file left.
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        let before = try PlistHistory.summaries(for: url.path).last?.number ?? 0
        store["after"] = 1
        try await store.flush()
        let after = try PlistHistory.list(for: url.path)
        #expect(after.last.map { $0.number > before } == true)
        #expect(try after.last?.contents()["after"] == 1)
        #expect(store.provenance(of: "after")?.origin == .write)
    }

    /// A writer killed between keeping its generation and replacing the file (the kill lands
    /// as a save begins: most often there) leaves no generation of the save that never
    /// happened: no listed generation holds a counter the file never got, so `settings restore`
    /// cannot write one.
    @Test func aWriterKilledBeforeItsReplaceLeavesNoGenerationOfIt() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        for round in 0..<60 {
            _ = try await Fault.signalled(["saving-writer", url.path], with: SIGKILL, after: 2 + round % 5)
            let saved = try #require(try PlistValue(contentsOf: url)["counter"]?.intValue)
            let listed = try PlistHistory.list(for: url.path)
            let counters = try listed.compactMap { try $0.contents()["counter"]?.intValue }
            #expect(counters.allSatisfy { $0 <= saved }, "round \(round): the file holds \(saved), generations \(counters)")
        }
        let numbers = try PlistHistory.summaries(for: url.path).map(\.number)
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
    }

    /// The tool and a program writing the same domain at once: afterwards every key is
    /// explained as its writer's, read back by a reader that starts then.
    @Test func theToolBesideAProgramLeavesEachKeyExplainedAsItsWriters() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        store["seed"] = 0
        try await store.flush()
        async let child = Fault.finished(["writer", url.path, "lib", "120"])
        var failed: [Int] = []
        for i in 0..<30 where try await HistoryAndProvenanceTests.runTool(["write", url.path, "tool-\(i)", String(i)]).status != 0 {
            failed.append(i)
        }
        let end = try await child
        #expect(!end.hung)
        #expect(end.status == 0)
        #expect(failed.isEmpty)
        let contents = try #require(try PlistValue(contentsOf: url).dictionaryValue)
        let log = try SettingsProvenanceLog.load(for: url.path)
        let wrongLib = (0..<120).filter { i in
            log.provenance(of: ["lib-\(i)"], in: contents, fileDate: Date())?.process != "settings-fault"
        }
        let wrongTool = (0..<30).filter { i in
            log.provenance(of: ["tool-\(i)"], in: contents, fileDate: Date())?.origin != .tool
        }
        #expect(wrongLib.isEmpty, "library keys not explained as the program's: \(wrongLib.prefix(20))")
        #expect(wrongTool.isEmpty, "tool keys not explained as the tool's: \(wrongTool.prefix(20))")
        #expect(log.provenance(of: ["seed"], in: contents, fileDate: Date())?.pid == Int(getpid()))
    }

    /// `settings history --purge` again and again while a program saves: the program's saves all
    /// land, and afterwards every key is explained as the program's and every generation parses.
    @Test func purgesWhileAProgramSavesLoseNoProvenance() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        store["seed"] = 0
        try await store.flush()
        async let child = Fault.finished(["writer", url.path, "lib", "150"])
        var failed = 0
        for _ in 0..<15 where try await HistoryAndProvenanceTests.runTool(["history", "--purge", url.path]).status != 0 {
            failed += 1
        }
        let end = try await child
        #expect(!end.hung)
        #expect(end.status == 0)
        #expect(failed == 0)
        let contents = try #require(try PlistValue(contentsOf: url).dictionaryValue)
        #expect((0..<150).allSatisfy { contents["lib-\($0)"] != nil })
        let log = try SettingsProvenanceLog.load(for: url.path)
        let wrong = (0..<150).filter { log.provenance(of: ["lib-\($0)"], in: contents, fileDate: Date())?.process != "settings-fault" }
        #expect(wrong.isEmpty, "not explained as the program's: \(wrong.prefix(20))")
        for generation in try PlistHistory.list(for: url.path) { _ = try generation.contents() }
    }

    /// History limits changed between runs (20, then 0, then 20): the last run's keys are
    /// explained as its own, nothing of the first run's history comes back, and what the run
    /// without history left is kept once as changed on disk.
    @Test func historyLimitsChangedBetweenRunsKeepOnlyWhatTheyShould() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        for (run, limit) in [20, 0, 20].enumerated() {
            let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored,
                                           options: PersistenceOptions(historyLimit: limit))
            for i in 0..<3 {
                store["run\(run)-\(i)"] = 1
                try await store.flush()
            }
        }
        let history = try PlistHistory.list(for: url.path)
        // The file as the run without history left it is kept first (values no generation
        // held, set by a writer that recorded nothing), then the last run's three saves.
        #expect(history.map(\.number) == [1, 2, 3, 4], "\(history.map(\.number))")
        #expect(history.map(\.writer.origin) == [.changedOnDisk, .write, .write, .write])
        #expect(try history.first?.contents()["run1-2"] == 1)
        #expect(try history.first?.contents()["run2-0"] == nil)
        let contents = try #require(try PlistValue(contentsOf: url).dictionaryValue)
        let log = try SettingsProvenanceLog.load(for: url.path)
        for i in 0..<3 {
            #expect(log.provenance(of: ["run2-\(i)"], in: contents, fileDate: Date())?.pid == Int(getpid()))
        }
    }

    /// The history journal made immutable while a program saves: every save still happens, its
    /// provenance is still read back (the log is written whole instead), and once the journal can
    /// be written again generations are kept again.
    @Test(.enabled(if: immutableDirectoriesWork, "needs root and chattr +i"))
    func anImmutableHistoryJournalStopsOnlyHistory() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        for i in 0..<3 {
            store["k\(i)"] = 1
            try store.flushNow()
        }
        let journal = URL(filePath: PlistHistory.journal(for: url.path))
        let before = try PlistHistory.list(for: url.path).map(\.number)
        try withImmutableDirectory(journal) {
            for i in 0..<20 {
                store["g\(i)"] = .integer(PlistInteger(Int64(i)))
                try store.flushNow()
            }
        }
        #expect(try PlistHistory.list(for: url.path).map(\.number) == before)
        let contents = try #require(try PlistValue(contentsOf: url).dictionaryValue)
        #expect(contents.count == 23)
        let log = try SettingsProvenanceLog.load(for: url.path)
        let wrong = (0..<20).filter { log.provenance(of: ["g\($0)"], in: contents, fileDate: Date())?.pid != Int(getpid()) }
        #expect(wrong.isEmpty, "\(wrong)")
        store["after"] = 1
        try store.flushNow()
        #expect(try PlistHistory.list(for: url.path).last?.contents()["after"] == 1)
        #expect(try SettingsProvenanceLog.load(for: url.path).entries[["after"]]?.pid == Int(getpid()))
    }
}
