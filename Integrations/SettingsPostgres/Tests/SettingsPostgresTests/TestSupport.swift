import Foundation
import Settings
import SettingsPlist
import Synchronization
import Testing
@testable import SettingsPostgres

/// The server from `test-server.sh`; tests skip (with this message) when it is not set.
enum TestServer {
    static let url = ProcessInfo.processInfo.environment["SETTINGS_PG_URL"]
    static let enabled: ConditionTrait = .enabled(if: url != nil, "SETTINGS_PG_URL is not set: run `bash ../../../shared/sync/test-server.sh swift test`")
}

/// A unique app id (space) per test.
func uniqueApp(_ name: String = #function) -> String {
    "test.\(name.prefix(40)).\(UUID().uuidString.prefix(8))"
}

/// A fresh temporary directory.
func temporaryDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appending(path: "settings-sync-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

/// One "device": a file store in its own directory and its sync, running.
final class TestDevice: Sendable {
    let dir: URL
    let store: SettingsStore
    let sync: SettingsSync
    let task: Task<Void, Never>

    init(app: String, dir: URL? = nil, scope: SettingsSyncScope = .all, url: String? = TestServer.url, start: Bool = true) throws {
        let dir = try dir ?? temporaryDirectory()
        self.dir = dir
        store = SettingsStore.file(dir.appending(path: "settings.plist"))
        sync = try SettingsSync.postgres(url: url ?? "", store: store, app: app, scope: scope)
        let sync = self.sync
        task = Task { if start { await sync.run() } }
    }

    /// `synchronize()`, retried through brief outages, up to `timeout`.
    func synchronize(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                try await sync.synchronize()
                return
            } catch {
                if ContinuousClock.now > deadline { throw error }
                try await Task.sleep(for: .milliseconds(50))  // retry pacing, not synchronisation
            }
        }
    }

    func stop() async {
        sync.stop()
        await task.value
    }
}

/// Collects a stream's elements in the background.
final class Collector<Element: Sendable>: Sendable {
    final class Items: Sendable {
        let list = Mutex<[Element]>([])
    }
    private let items = Items()

    init(_ stream: AsyncStream<Element>) {
        let items = self.items
        Task { for await x in stream { items.list.withLock { $0.append(x) } } }
    }

    var all: [Element] { items.list.withLock { $0 } }
}
