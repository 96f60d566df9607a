import Foundation
import InMemoryLogging
import Logging
import Settings
import SettingsConfiguration
import Testing

struct SettingsDiagnosticsLoggingTests {
    @Test func aDiagnosticIsOneLogLineWithFileKeyAndLayer() async throws {
        let dir = try TempDir()
        let store = dir.store()
        let handler = InMemoryLogHandler()
        store.logDiagnostics(to: Logger(label: "settings") { _ in handler })
        store["volume"] = "loud"
        #expect(Setting("volume", default: 0.5, store: store).wrappedValue == 0.5)
        let entry = try #require(handler.entries.first)
        #expect(handler.entries.count == 1)
        #expect(entry.level == .warning)
        #expect("\(entry.message)" == "key 'volume' has type String, expected Double (from user file); using the default")
        #expect(entry.metadata["settings.key"] == "volume")
        #expect(entry.metadata["settings.layer"] == "user file")
        #expect(entry.metadata["settings.kind"] == "typeMismatch")
        #expect(entry.metadata["settings.file"] == .string(dir.url.appending(path: "settings.plist").path(percentEncoded: false)))
        try await store.flush()   // saved before the directory goes
    }

    @Test func aSecretValueIsNeverLogged() throws {
        let store = SettingsStore.inMemory(["server": ["apiToken": "s3cr3t-value"]])
        let handler = InMemoryLogHandler()
        store.logDiagnostics(to: Logger(label: "settings") { _ in handler })
        let fallback = UUID()
        #expect(Setting("server/apiToken", default: fallback, store: store).wrappedValue == fallback)
        #expect(handler.entries.count == 1)
        #expect(!handler.entries.contains { "\($0.message)\($0.metadata)".contains("s3cr3t") })
    }
}
