import Foundation
import Settings
import SettingsPlist
import SettingsFiles
import Testing
@testable import SettingsPostgres

/// The sync engine's own files follow the library's file rules (`PlistFile`): never through a
/// symbolic link, temporary files created exclusively under unpredictable names.
struct SyncFilesTests {
    @Test func aLinkedLockFileIsRefusedAndItsTargetUntouched() async throws {
        let dir = try TemporaryDirectory()
        let victim = dir.appending(path: "victim")
        try Data("keep".utf8).write(to: victim)
        let store = SettingsStore.file(dir.appending(path: "settings.plist"))
        let sync = try SettingsSync.postgres(url: "postgres://u:p@127.0.0.1:1/d", store: store, app: "a")
        try FileManager.default.createSymbolicLink(at: sync.lockFileURL, withDestinationURL: victim)
        var statuses = sync.statusUpdates.makeAsyncIterator()
        let task = Task { await sync.run() }
        var reason = ""
        while let s = await statuses.next() {
            if case .offline(let r) = s { reason = r; break }
        }
        sync.stop()
        await task.value
        #expect(reason.contains("link"), "\(reason)")
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep")
    }

    @Test func theStateFileIsNeitherReadNorWrittenThroughALink() throws {
        let dir = try TemporaryDirectory()
        let victim = dir.appending(path: "victim")
        try Data("keep".utf8).write(to: victim)
        let url = dir.appending(path: "settings.sync.plist")
        try FileManager.default.createSymbolicLink(at: url, withDestinationURL: victim)
        let storage = SyncStateStorage(url: url)
        #expect(throws: SyncStateStorage.Unreadable.self) { _ = try storage.load() }
        try storage.save(SyncStateFile(app: "a", device: UUID()))
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep")
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect(try storage.load()?.app == "a")
        // No temporary file is left, and none has a predictable (pid) name.
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(!names.contains { $0.contains("tmp-\(getpid())") || $0.contains(".tmp-") })
    }
}
