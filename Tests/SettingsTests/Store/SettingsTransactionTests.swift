#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import Settings
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Synchronization
#if canImport(Dispatch)
import Dispatch
#endif
import Testing

/// `store.transaction { … }`: several keys changed as one save, one generation and one
/// announcement (issue 29, part 2).
struct SettingsTransactionTests {
    @Test func severalKeysAreAnnouncedOnceAndSavedAsOneGeneration() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        let store = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored)
        let changes = Mutex<[SettingsChange]>([])
        let observation = store.onChange { change in changes.withLock { $0.append(change) } }
        defer { observation.cancel() }
        try store.transaction { settings in
            settings["Network/host"] = "example.org"
            settings["Network/port"] = 8443
            #expect(settings["Network/port"] == 8443, "reads see the transaction's own writes")
            #expect(settings.store["Network/port"] == nil, "the store sees none before it ends")
            settings["Network/port"] = 443  // a later write to a key wins
        }
        let seen = changes.withLock { $0 }
        #expect(seen.count == 1)
        #expect(Set(seen.first?.keys ?? []) == ["Network/host", "Network/port"])
        try store.flushNow()
        let generations = try PlistHistory.list(for: file.path)
        #expect(generations.count == 1)
        #expect(Set(generations.first?.changed ?? []) == [["Network", "host"], ["Network", "port"]])
        #expect(try PlistValue(contentsOf: file)["Network"] == ["host": "example.org", "port": 443])
    }

    @Test func aSaveRunningMeanwhileNeverTakesHalfATransaction() async throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        var options = PersistenceOptions()
        options.historyLimit = 1000
        let store = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored, options: options)
        let rounds = 200
        // Saves run on another task while the transactions are made.
        async let saver: Void = {
            for _ in 0..<rounds { try? store.flushNow() }
        }()
        for i in 1...rounds {
            try store.transaction { settings in
                settings["a"] = .integer(PlistInteger(Int64(i)))
                settings["b"] = .integer(PlistInteger(Int64(i)))
            }
        }
        await saver
        try store.flushNow()
        for generation in try PlistHistory.list(for: file.path) {
            let contents = try generation.contents()
            #expect(contents["a"] == contents["b"], "generation \(generation.number) holds half a transaction: \(contents)")
        }
        #expect(try PlistValue(contentsOf: file)["a"] == .integer(PlistInteger(Int64(rounds))))
    }

    @Test func aWriteThatCouldNeverBeStoredRefusesTheWholeTransaction() throws {
        let store = SettingsStore.inMemory()
        store["kept"] = 1
        let tooDeep = SettingsKey(components: Array(repeating: "k", count: PlistNesting.maximumDepth + 1))
        #expect {
            try store.transaction { settings in
                settings["kept"] = 2
                settings[tooDeep] = 1
            }
        } throws: { error in
            (error as? SettingsError)?.code == .unstorable
        }
        #expect(store["kept"] == 1)
    }

    /// Transactions that read and write the same key from several threads (found by the attack
    /// on issue 29): a body that read a value another thread changed meanwhile runs again, so
    /// no increment is lost.
    @Test func concurrentReadModifyWriteTransactionsLoseNoIncrement() throws {
        let store = SettingsStore.inMemory()
        store["n"] = 0
        let threads = 4, rounds = 500
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<rounds {
                try? store.transaction { settings in
                    let n = settings["n"]?.intValue ?? 0
                    settings["n"] = .integer(PlistInteger(Int64(n + 1)))
                }
            }
        }
        #expect(store["n"]?.intValue == threads * rounds)
    }
}
