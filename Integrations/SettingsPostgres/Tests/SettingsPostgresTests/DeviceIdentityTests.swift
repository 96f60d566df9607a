import Foundation
import Settings
import Synchronization
import Testing
@testable import SettingsPostgres

/// A configuration directory copied to another machine becomes a new device there.
@Suite(TestServer.enabled, .serialized, .timeLimit(.minutes(1)))
struct DeviceIdentityTests {
    @Test func aCopiedConfigDirectoryGetsANewDeviceIdOnAnotherMachine() async throws {
        let app = uniqueApp()
        let machines = try TemporaryDirectory()
        let m1 = machines.appending(path: "m1"), m2 = machines.appending(path: "m2")
        try Data("0f1e2d3c4b5a69788796a5b4c3d2e1f0\n".utf8).write(to: m1)
        try Data("aaaabbbbccccddddeeeeffff00001111\n".utf8).write(to: m2)

        func device(_ dir: TemporaryDirectory, machine: URL) async throws -> UUID {
            let d = try TestDevice(app: app, dir: dir, start: false)
            d.sync.machineIDFile.withLock { $0 = machine }
            let task = Task { await d.sync.run() }
            try await d.synchronize()
            let id = try #require(d.sync.device)
            d.sync.stop()
            await task.value
            return id
        }
        let original = try TemporaryDirectory()
        let first = try await device(original, machine: m1)
        #expect(try await device(original, machine: m1) == first)   // same machine, same device
        let copy = try TemporaryDirectory()
        try FileManager.default.removeItem(at: copy.url)
        try FileManager.default.copyItem(at: original.url, to: copy.url)
        let moved = try await device(copy, machine: m2)
        #expect(moved != first)
        #expect(try await device(copy, machine: m2) == moved)
    }
}
