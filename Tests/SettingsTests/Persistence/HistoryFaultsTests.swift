#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import Settings
import SettingsPlist
import SettingsFiles
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Makes a directory immutable (`chattr +i`: even root cannot create or rename entries in it)
/// for the length of `body`: how a save fails for real when the file cannot be replaced.
@discardableResult
func withImmutableDirectory<R>(_ directory: URL, _ body: () throws -> R) throws -> R {
    let chattr = URL(filePath: "/usr/bin/chattr")
    let set = try runProgram(chattr, ["+i", directory.path])
    try #require(set.status == 0, "chattr +i failed: \(set.stderr)")
    defer { _ = try? runProgram(chattr, ["-i", directory.path]) }
    return try body()
}

/// Whether `chattr +i` works here (root on a file system with immutable files).
let immutableDirectoriesWork: Bool = {
    guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"),
          let dir = try? TemporaryDirectory() else { return false }
    guard let set = try? runProgram(URL(filePath: "/usr/bin/chattr"), ["+i", dir.url.path]), set.status == 0 else { return false }
    _ = try? runProgram(URL(filePath: "/usr/bin/chattr"), ["-i", dir.url.path])
    return true
}()

/// History kept only for saves that happen (issue 28, item 4).
struct HistoryFaultsTests {
    @Test(.enabled(if: immutableDirectoriesWork, "needs root and chattr +i"))
    func aSaveThatFailsAgainAndAgainKeepsNoGeneration() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        let store = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored)
        store["k"] = 1
        try store.flushNow()
        store["k"] = 2
        try store.flushNow()
        let before = try PlistHistory.list(for: file.path)
        #expect(before.count == 2)

        try withImmutableDirectory(dir.url) {
            store["k"] = 3
            for _ in 0..<5 {
                #expect(throws: SettingsError.self) { try store.flushNow() }
            }
        }
        let during = try PlistHistory.list(for: file.path)
        #expect(during.map(\.number) == before.map(\.number), "failed saves kept generations: \(during.map(\.number))")
        #expect(try PlistValue(contentsOf: file)["k"] == 2)

        // Once the file can be replaced again, the save happens and keeps one generation.
        try store.flushNow()
        let after = try PlistHistory.list(for: file.path)
        #expect(after.count == 3)
        #expect(try after.last?.contents()["k"] == 3)
        #expect(try PlistValue(contentsOf: file)["k"] == 3)
    }
}

/// A restore makes the file equal the generation for the keys restored, whatever another
/// process wrote since this store last looked (issue 28, item 8).
struct RestoreOverUnseenChangesTests {
    @Test(arguments: [false, true])
    func aRestoreReplacesAChangeTheStoreHasNotSeen(keyWise: Bool) async throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        let store = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored)
        store["k"] = 1
        try await store.flush()
        let generation = try #require(try await store.history().last).number

        // Another program changes k and adds j; this store does not look (externalChanges: .ignored).
        let other = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored)
        other["k"] = 2
        other["j"] = true
        try await other.flush()

        try await store.restore(generation, keys: keyWise ? ["k"] : nil)
        let onDisk = try PlistValue(contentsOf: file)
        #expect(onDisk["k"] == 1, "\(onDisk)")
        #expect(onDisk["j"] == (keyWise ? true : nil), "\(onDisk)")
        #expect(store["k"] == 1)
    }
}

/// Temporary files of the provenance log left by a writer killed mid-save are swept as the
/// settings file's are (issue 28, item 20), and the layers manifest's once old enough.
struct ProvenanceLeftoversTests {
    /// A store (a process) that sets `k` to `value` and flushes.
    private func save(_ value: Int, to file: URL) throws {
        let store = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored)
        store["k"] = .integer(PlistInteger(Int64(value)))
        try store.flushNow()
    }

    @Test func aKilledWritersProvenanceTemporaryFilesAreRemovedAtTheNextSave() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        try save(1, to: file)
        let companion = PlistFile.companionDirectory(for: file.path)
        let leftovers = [".provenance.plist.tmp-1234-abcd", ".provenance.plist.tmp-99"]
        for name in leftovers { try Data([0x62]).write(to: URL(filePath: companion + "/" + name)) }
        let other = companion + "/keep-me.txt"
        try Data([0x61]).write(to: URL(filePath: other))

        try save(2, to: file)  // the next process
        for name in leftovers { #expect(!FileManager.default.fileExists(atPath: companion + "/" + name)) }
        #expect(FileManager.default.fileExists(atPath: other))
        #expect(try SettingsProvenanceLog.load(for: file.path).entries[["k"]]?.origin == .write)
    }

    /// The layers manifest is written without the settings file's lock, so only its temporary
    /// files too old to be a writer's in progress (a minute) are removed.
    @Test func aKilledWritersOldManifestTemporaryFilesAreRemovedButNotRecentOnes() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        try save(1, to: file)
        let companion = PlistFile.companionDirectory(for: file.path)
        let old = companion + "/.layers.plist.tmp-28d7b8f6044fc7a3"
        let recent = companion + "/.layers.plist.tmp-0123456789abcdef"
        try Data([0x62]).write(to: URL(filePath: old))
        try Data([0x62]).write(to: URL(filePath: recent))
        let hourAgo = timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)
        #expect(utimensat(AT_FDCWD, old, [hourAgo, hourAgo], 0) == 0)

        try save(2, to: file)  // the next process
        #expect(!FileManager.default.fileExists(atPath: old))
        #expect(FileManager.default.fileExists(atPath: recent))
    }
}

/// The provenance log's bounds degrade to "not known", never to a false "changed on disk", and
/// never keep a spurious generation (issue 28, item 9).
struct ProvenanceBoundsTests {
    @Test(arguments: [(keys: 10_050, nameLength: 8), (keys: 10_000, nameLength: 450)])
    func aLogPastItsBoundsNeverCallsTheProgramsOwnWritesHandEdits(keys: Int, nameLength: Int) throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        let padding = String(repeating: "k", count: nameLength)
        // A byte budget that keeps every generation here, so counting them tells what was kept.
        let options = PersistenceOptions(historyByteBudget: 1 << 30)
        let first = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored, options: options)
        for i in 0..<keys { first[SettingsKey(components: ["\(padding)\(i)"])] = .integer(PlistInteger(Int64(i))) }
        try first.flushNow()
        let log = SettingsProvenanceLog.path(for: file.path)
        var s = stat()
        #expect(stat(log, &s) == 0 && Int(s.st_size) <= SettingsProvenanceLog.maximumSize, "the log is written larger than it is read")
        let generations = try PlistHistory.list(for: file.path).count

        // A restart, and a save of one more key: no full-file "changed on disk" generation.
        let second = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored, options: options)
        second["last"] = true
        try second.flushNow()
        let after = try PlistHistory.list(for: file.path)
        #expect(after.count == generations + 1, "\(after.map { ($0.number, $0.writer.origin) })")
        #expect(!after.contains { $0.writer.origin == .changedOnDisk })
        for i in [0, keys / 2, keys - 1] {
            let origin = second.provenance(of: SettingsKey(components: ["\(padding)\(i)"]))?.origin
            #expect(origin == .write || origin == .unknown, "key \(i): \(String(describing: origin))")
        }
        #expect(second.provenance(of: "last")?.origin == .write)
    }
}

/// Provenance names the writer of each key, whatever else the save holds and however many
/// tries it took (issue 28, item 18).
struct ProvenancePerKeyTests {
    @Test(.enabled(if: immutableDirectoriesWork, "needs root and chattr +i"))
    func aSyncedValueKeepsItsOriginAcrossAFailedSave() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        let store = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored)
        store["local"] = 0
        try store.flushNow()
        store.applyToUserLayer([("synced", .integer(1))], origin: .sync, devices: ["synced": "DEVICE-X"])
        try withImmutableDirectory(dir.url) {
            #expect(throws: SettingsError.self) { try store.flushNow() }
        }
        try store.flushNow()
        let provenance = try #require(store.provenance(of: "synced"))
        #expect(provenance.origin == .sync)
        #expect(provenance.device == "DEVICE-X")
    }

    @Test func aSaveOfASyncedAndALocalValueIsNotCalledASync() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        let store = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored)
        store.applyToUserLayer([("a", .integer(1))], origin: .sync, devices: ["a": "DEVICE-X"])
        store["b"] = 2
        try store.flushNow()
        let newest = try #require(try PlistHistory.list(for: file.path).last)
        #expect(newest.writer.origin == .write)
        #expect(store.provenance(of: "a")?.origin == .sync)
        #expect(store.provenance(of: "b")?.origin == .write)
    }

    @Test func aRenamedKeyIsRecordedAsAMigration() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        try PlistValue.dictionary(["timeout": 12]).write(to: file)
        let store = SettingsStore.file(file, autosaveDelay: nil, externalChanges: .ignored)
        store.registerRename(of: "Network/timeout", formerly: ["timeout"])
        try store.flushNow()
        #expect(store.provenance(of: "Network/timeout")?.origin == .migration)
        #expect(try PlistHistory.list(for: file.path).last?.writer.origin == .migration)
    }
}
