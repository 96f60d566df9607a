#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import Settings
import SettingsTestSupport

struct OverrideFileTests {
    @Test func anOverrideFileMergesDeeplyKeepingTheDefaultsSiblingKeys() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Staging.plist", """
            <dict><key>API</key><dict>
                <key>host</key><string>staging.example.com</string>
                <key>Auth</key><dict><key>token</key><string>t</string></dict>
            </dict></dict>
            """)
        let store = SettingsStore.inMemory()
        store.register(defaults: ["API": ["host": "example.com", "port": 443, "Auth": ["user": "u", "token": "d"]]])
        store["API/host"] = "user.example.com"
        try store.loadOverrides(contentsOf: url)
        #expect(store["API/host"] == "staging.example.com")
        #expect(store.source(of: "API/host") == .overrides)
        #expect(store["API/port"] == 443)
        #expect(store.source(of: "API/port") == .defaults)
        #expect(store["API/Auth"] == ["user": "u", "token": "t"])
        #expect(store.source(of: "API/Auth/user") == .defaults)
        #expect(store.value(for: "API/host", in: .user) == "user.example.com")
    }

    @Test func laterFilesWinAndNestedDictionariesMergeKeyByKey() throws {
        let dir = try TemporaryDirectory()
        let first = try dir.writePlist("A.plist", """
            <dict><key>API</key><dict><key>host</key><string>a</string><key>retries</key><integer>1</integer></dict>
            <key>flag</key><true/></dict>
            """)
        let second = try dir.writePlist("B.plist", """
            <dict><key>API</key><dict><key>host</key><string>b</string><key>timeout</key><integer>5</integer></dict></dict>
            """)
        let store = SettingsStore.inMemory()
        try store.loadOverrides(contentsOf: first)
        try store.loadOverrides(contentsOf: second)
        #expect(store.contents(of: .overrides) == ["API": ["host": "b", "retries": 1, "timeout": 5], "flag": true])
    }

    @Test func overrideFileErrorsLeaveTheLayerUnchanged() throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.inMemory()
        store.addOverrides(["kept": 1])
        let missing = dir.file("Missing.plist")
        let notFound = try #require(settingsError { () throws(SettingsError) in try store.loadOverrides(contentsOf: missing) })
        #expect(notFound.code == .missingFile)
        #expect(notFound.description == "file not found: \(missing.path)")

        let broken = try dir.write("Broken.plist", "<plist><dict><key>a</key><string>x</dict></plist>")
        let invalid = try #require(settingsError { () throws(SettingsError) in try store.loadOverrides(contentsOf: broken) })
        #expect(invalid.code == .invalidFile)
        let underlying = try #require(invalid.underlying)
        #expect(invalid.description == "\(broken.path):\(Self.lineColumn(underlying)): \(underlying.message)")

        let array = try dir.writePlist("Array.plist", "<array/>")
        let notADictionary = try #require(settingsError { () throws(SettingsError) in try store.loadOverrides(contentsOf: array) })
        #expect(notADictionary.description == "\(array.path): the root is an array, expected a dict")
        #expect(store.contents(of: .overrides) == ["kept": 1])
    }

    /// `LINE:COL` of an XML parse error.
    static func lineColumn(_ error: PlistError) -> String {
        guard case .line(let line, let column)? = error.position else { return "?" }
        return "\(line):\(column)"
    }
}
