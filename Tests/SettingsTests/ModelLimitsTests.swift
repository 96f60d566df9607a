import Foundation
import Settings
import Testing
import SettingsTestSupport

/// Models nested a thousand levels deep, huge arrays, repeated diagnostics: bounded, never a crash.
@Suite("Models: limits")
struct ModelLimitsTests {
    @Test(.timeLimit(hangLimit)) func aThousandLevelsDeepDoNotCrashAndWhatIsSavedLoadsBack() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("deep.plist")
        var chain = AttackDeep.Chain.end
        for i in 0..<1_000 { chain = .link(i, chain) }
        var model = AttackDeep()
        model.chain = chain
        do {
            try model.save(to: url)
        } catch {
            // Refusing is fine if the message is clear and nothing was written.
            #expect(error.description.contains("deep") || error.description.contains("nest"), "unclear: \(error)")
            #expect(!FileManager.default.fileExists(atPath: url.path))
            return
        }
        // Written: then this program must be able to read its own file back.
        #expect(try AttackDeep.load(from: url) == model)
    }

    @Test(.timeLimit(hangLimit)) func aFileNestedAThousandLevelsDeepIsRefusedClearlyAndKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("deep.plist")
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>label</key><string>x</string><key>extra</key>"
        xml += String(repeating: "<array>", count: 1_000) + String(repeating: "</array>", count: 1_000)
        xml += "</dict></plist>"
        try Data(xml.utf8).write(to: url)
        #expect {
            try AttackDeep.load(from: url)
        } throws: { error in
            "\(error)".contains(url.path) && "\(error)".contains("deep")
        }
        var model = AttackDeep()
        model.label = "new"
        try model.save(to: url)
        let aside = try corruptCopies(in: dir, of: "deep.plist")
        #expect(aside.count == 1)
        if let first = aside.first { #expect(try Data(contentsOf: dir.file(first)) == Data(xml.utf8)) }
    }

    @Test(.timeLimit(hangLimit)) func aHugeArrayWithEveryElementBadIsKeptWhole() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("huge.plist")
        let bad = (0..<30_000).map { i -> PlistValue in ["host": .integer(PlistInteger(Int64(i)))] }
        try PlistValue.dictionary(["name": "n", "servers": .array(bad)]).write(to: url, format: .binary)
        // 30,000 reports, one per bad element (that each report costs the same is checked by
        // `reportingDiagnosticsCostsTheSameEachTime`, by how the cost grows, not by a clock).
        var fleet = try Fleet.load(from: url)
        #expect(fleet.servers.isEmpty)
        #expect(fleet.name == "n")
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad))
        fleet.name = "m"
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad))
        // Appending one server must not throw away the 30,000 this program cannot read.
        fleet.servers.append(Fleet.Server(host: "new", port: 1))
        try fleet.save(to: url)
        #expect(try stored(url)["servers"] == .array(bad + [["host": "new", "port": 1]]))
        #expect(try Fleet.load(from: url).servers == [Fleet.Server(host: "new", port: 1)])
    }

    @Test(.timeLimit(hangLimit)) func reportingDiagnosticsCostsTheSameEachTime() {
        let store = SettingsStore.inMemory([:])
        store.diagnosticsHandler = { _ in }
        // Reading a handler is what piled up thunks (the mutex's `inout` wrote it back
        // re-abstracted), so each report cost more than the last: 30,000 of each took about 25 s.
        // Only read here: setting the process-wide one would race other tests.
        let ratio = growth(from: 3_000, to: 30_000) { count in
            for _ in 0..<count {
                _ = SettingsDiagnostics.handler
                store.diagnosticsHandler?(SettingsDiagnostic(.typeMismatch, "x"))
            }
        }
        #expect(isLinear(ratio, from: 3_000, to: 30_000), "10x the reports cost \(ratio)x the time")
    }
}
