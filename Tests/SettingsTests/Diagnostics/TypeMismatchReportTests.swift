import Foundation
@testable import Settings
import Synchronization
import Testing
import SettingsTestSupport

/// A stored value of the wrong type is reported once per value, however many readers see it.
@Suite("Type mismatch reports")
struct TypeMismatchReportTests {
    struct Counted {
        @Setting("mismatch/count", default: 7) var count: Int
    }

    @Test(.timeLimit(hangLimit)) func oneExternalEditIsReportedOncePerKeyAndAgainForTheNextValue() async throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.file(dir.file(), autosaveDelay: nil)
        let reports = Mutex<[String]>([])
        store.diagnosticsHandler = { d in if d.kind == .typeMismatch { reports.locked { $0.append(d.message) } } }
        let settings = SettingsStore.bind(Counted(), to: store)
        var seen = Set<SettingsObservation>()
        settings.$count.onChange { _, _ in }.store(in: &seen)   // reads old and new on each change
        var changes = store.changes.makeAsyncIterator()
        #expect(settings.count == 7)

        // One edit by another process: the observer and the reader both see the bad value.
        let other = SettingsStore.file(dir.file(), autosaveDelay: nil, externalChanges: .ignored)
        other["mismatch/count"] = "many"
        try await other.flush()
        _ = await nextChange(&changes)
        #expect(settings.count == 7)
        #expect(settings.count == 7)
        #expect(reports.locked { $0.count } == 1, "\(reports.locked { $0 })")

        // Another bad value: reported again, once.
        other["mismatch/count"] = "lots"
        try await other.flush()
        _ = await nextChange(&changes)
        #expect(settings.count == 7)
        #expect(reports.locked { $0.count } == 2, "\(reports.locked { $0 })")
    }
}
