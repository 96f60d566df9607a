import Configuration
import Settings
import SettingsConfiguration
import SettingsPlist
import Synchronization
import Testing

/// `watchValue` observes its own store key only: a change to another key runs nothing of it
/// (what that costs with 100 idle watchers: settings-config-bench).
struct SettingsProviderWatchValueTests {
    @Test(.timeLimit(.minutes(1)))
    func aChangeToAnotherKeyRunsNothingOfAWatcher() async throws {
        let store = SettingsStore.inMemory()
        // A mapping that counts its calls: a watcher consulted about a change calls it.
        let calls = Mutex(0)
        let mapping = SettingsKeyMapping(
            storeKey: { key in
                calls.withLock { $0 += 1 }
                return SettingsKey(components: key.components)
            },
            configKey: { AbsoluteConfigKey($0.components) })
        let provider = SettingsProvider(store: store, keyMapping: mapping)
        let (ready, readiness) = AsyncStream.makeStream(of: Int.self)
        let (seen, seeing) = AsyncStream.makeStream(of: Int?.self)
        await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<10 {
                group.addTask {
                    try await provider.watchValue(forKey: ["watched\(i)"], type: .int) { updates in
                        for await update in updates {
                            guard case .int(let value)? = try update.get().value?.content else {
                                readiness.yield(i)
                                continue
                            }
                            seeing.yield(value)
                        }
                    }
                }
            }
            var started = 0
            for await _ in ready {
                started += 1
                if started == 10 { break }
            }
            let before = calls.withLock { $0 }
            for i in 0..<100 { store["other"] = .integer(PlistInteger(Int64(i))) }
            #expect(calls.withLock { $0 } == before, "100 changes to another key consulted no watcher")
            store["watched3"] = 3
            var values = seen.makeAsyncIterator()
            #expect(await values.next() == 3)
            group.cancelAll()
        }
    }
}
