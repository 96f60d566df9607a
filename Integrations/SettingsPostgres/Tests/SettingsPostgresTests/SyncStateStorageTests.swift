import Foundation
import Settings
import SettingsPlist
import SettingsFiles
import Testing
@testable import SettingsPostgres

/// The state file's two slots (``SyncStateStorage``, issue 30, item 12): saves write in place,
/// a torn save leaves the state before it, and a file that is not a state (corrupt, planted,
/// cut short) is a clear error naming it, never a crash.
struct SyncStateStorageTests {
    func state(cursor: Int64, leaves: Int = 3) -> SyncStateFile {
        var s = SyncStateFile(app: "a", device: UUID(uuidString: "00000000-0000-0000-0000-000000000001") ?? UUID())
        s.cursorSeq = cursor
        for i in 0..<leaves {
            s.leaves["k\(i)"] = LeafRegister(hlc: Int64(i), device: s.device, digest: Int64(i), state: .synced)
        }
        return s
    }

    /// A fresh directory (removed with the last reference to `dir`) and the state file's place in it.
    func stateFile() throws -> (dir: TemporaryDirectory, url: URL) {
        let dir = try TemporaryDirectory()
        return (dir, dir.appending(path: "settings.sync.plist"))
    }

    /// The cursor the next run would read.
    func cursorOnDisk(_ url: URL) throws -> Int64? {
        try SyncStateStorage(url: url).load()?.cursorSeq
    }

    func inode(_ url: URL) throws -> UInt64 {
        try #require(try PlistFile.identity(of: url.path)).inode
    }

    @Test func savesWriteInPlaceAndTheNewestIsRead() throws {
        let (dir, url) = try stateFile()
        let storage = SyncStateStorage(url: url)
        try storage.save(state(cursor: 1))
        let first = try inode(url)
        for cursor in 2...5 { try storage.save(state(cursor: Int64(cursor))) }
        #expect(try inode(url) == first)
        #expect(try storage.load() == state(cursor: 5))
        // Another reader (the next run) finds the same, and writes on from it.
        let next = SyncStateStorage(url: url)
        #expect(try next.load()?.cursorSeq == 5)
        try next.save(state(cursor: 6))
        #expect(try inode(url) == first)
        #expect(try cursorOnDisk(url) == 6)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(names == ["settings.sync.plist"])
    }

    /// A crash in the middle of a save: the slot being written is torn (part new, part old, or
    /// zeros); the other slot still holds the state saved before, and that is what is read.
    @Test(arguments: [0, 8, 16, 24, 40, 100])
    func aTornSaveLeavesTheStateBeforeIt(tornAt offset: Int) throws {
        let file = try stateFile(), url = file.url
        let storage = SyncStateStorage(url: url)
        try storage.save(state(cursor: 1))
        try storage.save(state(cursor: 2))   // the second slot
        var bytes = try [UInt8](Data(contentsOf: url))
        let slotSize = bytes.count / 2
        // Tear the second slot from `offset`: the rest of the new save never reached the disk.
        for i in (slotSize + offset)..<min(bytes.count, slotSize + offset + 64) { bytes[i] ^= 0x5a }
        try Data(bytes).write(to: url)
        let reader = SyncStateStorage(url: url)
        #expect(try reader.load()?.cursorSeq == 1)
        // The next save writes the torn slot, not the good one.
        try reader.save(state(cursor: 3))
        #expect(try cursorOnDisk(url) == 3)
        withExtendedLifetime(file.dir) {}
    }

    @Test func aStateThatOutgrowsItsSlotsIsReplacedWhole() throws {
        let file = try stateFile(), url = file.url
        let storage = SyncStateStorage(url: url)
        try storage.save(state(cursor: 1))
        let small = try inode(url)
        try storage.save(state(cursor: 2, leaves: 2_000))
        #expect(try inode(url) != small)
        #expect(try SyncStateStorage(url: url).load() == state(cursor: 2, leaves: 2_000))
        try storage.save(state(cursor: 3, leaves: 2_000))
        #expect(try cursorOnDisk(url) == 3)
        withExtendedLifetime(file.dir) {}
    }

    /// Format 1 (one whole binary plist, before the slots) is read, and the next save writes slots.
    @Test func aStateFileOfFormatOneIsReadAndRewrittenInSlots() throws {
        let file = try stateFile(), url = file.url
        try PlistFile.replace(url.path, with: try state(cursor: 7).plist.encodedBytes(as: .binary), permissions: 0o600)
        let storage = SyncStateStorage(url: url)
        #expect(try storage.load() == state(cursor: 7))
        try storage.save(state(cursor: 8))
        let bytes = try [UInt8](Data(contentsOf: url))
        #expect(bytes.starts(with: SyncStateStorage.magic))
        #expect(try cursorOnDisk(url) == 8)
        withExtendedLifetime(file.dir) {}
    }

    /// A file someone else put there since this storage last saw it is replaced, not written into.
    @Test func aFileReplacedBehindItsBackIsNotWrittenInPlace() throws {
        let (dir, url) = try stateFile()
        let storage = SyncStateStorage(url: url)
        try storage.save(state(cursor: 1))
        let other = dir.appending(path: "other")
        try Data("keep".utf8).write(to: other)
        try FileManager.default.removeItem(at: url)
        try FileManager.default.linkItem(at: other, to: url)   // the same inode as `other`
        try storage.save(state(cursor: 2))
        #expect(try String(contentsOf: other, encoding: .utf8) == "keep")
        #expect(try cursorOnDisk(url) == 2)
    }

    /// Outside input: whatever is found there is a clear error naming the file, never a crash.
    @Test(arguments: [
        [UInt8](),
        Array("garbage".utf8),
        Array("SSYNCST1".utf8) + [UInt8](repeating: 0xff, count: 56),          // lengths far past the file
        Array("SSYNCST1".utf8) + [UInt8](repeating: 0, count: 57),             // an odd size
        Array("bplist00".utf8) + [UInt8](repeating: 0, count: 40),             // format 1, cut short
    ])
    func aCorruptStateFileIsAClearError(_ bytes: [UInt8]) throws {
        let file = try stateFile(), url = file.url
        try Data(bytes).write(to: url)
        let error = #expect(throws: SyncStateStorage.Unreadable.self) { _ = try SyncStateStorage(url: url).load() }
        #expect(error?.description.contains(url.path) == true)
        withExtendedLifetime(file.dir) {}
    }

    /// Every field survives a save: applying registers with the register before them, tombstones,
    /// several devices, secrets, the machine.
    @Test func everyFieldOfTheStateIsKept() throws {
        var s = state(cursor: 9)
        s.cursorKey = "a/b"
        s.lastHLC = 123 << 16
        s.clockOffsetMs = -42
        s.machine = "m1"
        s.secretLeaves = ["token", "x/ü"]
        let other = UUID()
        s.leaves["gone"] = LeafRegister(hlc: 5, device: other, digest: nil, state: .superseded)
        var applying = LeafRegister(hlc: 7, device: other, digest: -3, state: .applying)
        (applying.prevHLC, applying.prevDevice, applying.prevDigest, applying.prevState, applying.prevExists) = (6, s.device, nil, .pending, true)
        s.leaves["x/ü"] = applying
        s.leaves["r"] = LeafRegister(hlc: 8, device: s.device, digest: .min, state: .rejected)
        #expect(SyncStateFile(bytes: s.bytes[...]) == s)
        let file = try stateFile(), url = file.url
        try SyncStateStorage(url: url).save(s)
        #expect(try SyncStateStorage(url: url).load() == s)
        withExtendedLifetime(file.dir) {}
    }

    /// A slot's state cut short anywhere, or with a byte more, is refused, never a crash.
    @Test func aStateCutShortIsRefused() {
        var s = state(cursor: 3)
        s.secretLeaves = ["k0"]
        var applying = LeafRegister(hlc: 7, device: UUID(), digest: 1, state: .applying)
        (applying.prevHLC, applying.prevDevice, applying.prevDigest, applying.prevState, applying.prevExists) = (6, s.device, 2, .synced, false)
        s.leaves["k1"] = applying
        let bytes = s.bytes
        for end in 0..<bytes.count { #expect(SyncStateFile(bytes: bytes[..<end]) == nil) }
        #expect(SyncStateFile(bytes: (bytes + [0])[...]) == nil)
    }

    @Test func aSlotHoldingSomethingElseIsAClearError() throws {
        let file = try stateFile(), url = file.url
        let payload = Array("not a state".utf8)
        var bytes = SyncStateStorage.slot(payload, sequence: 1)
        bytes += [UInt8](repeating: 0, count: 2 * 4096 - bytes.count)
        try Data(bytes).write(to: url)
        let error = #expect(throws: SyncStateStorage.Unreadable.self) { _ = try SyncStateStorage(url: url).load() }
        #expect(error?.description.contains("slot 0 is not a sync state") == true)
        withExtendedLifetime(file.dir) {}
    }

    /// A planted, corrupt state file: the device starts over as a new device (a full pull) and syncs.
    @Test(TestServer.enabled)
    func aDeviceWithACorruptStateFileStartsOverAndSyncs() async throws {
        let app = uniqueApp()
        let a = try TestDevice(app: app)
        a.store["from.a"] = "arrives"
        try await a.synchronize()
        let dir = try TemporaryDirectory()
        try Data("SSYNCST1 and then nothing that makes sense".utf8).write(to: dir.appending(path: "settings.sync.plist"))
        let b = try TestDevice(app: app, dir: dir)
        try await b.synchronize()
        #expect(b.store.value(for: "from.a", in: .user) == "arrives")
        #expect(try SyncStateStorage(url: b.sync.stateFileURL).load()?.cursorSeq ?? 0 > 0)
        await a.stop(); await b.stop()
    }
}
