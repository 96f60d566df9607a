#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import Settings
import SettingsTestSupport

struct OptionsFileTests {
    @Test func anOptionsFileWithOverridesIsReadAsDefaultsAndOverrides() throws {
        let dir = try TemporaryDirectory()
        let options = try dir.writePlist("Options.plist", """
            <dict><key>API</key><dict>
                <key>host</key><string>example.com</string>
                <key>port</key><integer>443</integer>
            </dict></dict>
            """)
        let staging = try dir.writePlist("Staging.plist", "<dict><key>API</key><dict><key>host</key><string>staging</string></dict></dict>")
        let store = try SettingsStore.options(contentsOf: options, overrides: [staging])
        #expect(try store.requiredValue(at: "API", "host", as: String.self) == "staging")
        #expect(try store.requiredValue(at: "API", "port", as: Int.self) == 443)
        #expect(store.source(of: "API/host") == .overrides)
        #expect(store.source(of: "API/port") == .defaults)
        #expect(store.url == nil)
        #expect(settingsErrorDescription { () throws(SettingsError) in try store.requiredValue(at: "API", "port", as: String.self) }
            == "key 'API/port' has type Int, expected String (from registered defaults)")
        #expect(settingsErrorDescription { () throws(SettingsError) in try store.requiredValue(at: "API", "path", as: String.self) }
            == "no value for key 'API/path' (namespace 'API' has no key 'path')")
    }

    @Test func aMissingOptionsOrOverrideFileIsAMissingFileError() throws {
        let dir = try TemporaryDirectory()
        let options = try dir.writePlist("Options.plist", "<dict/>")
        let absent = dir.file("Absent.plist")
        let first = try #require(settingsError { () throws(SettingsError) in _ = try SettingsStore.options(contentsOf: absent) })
        #expect(first.code == .missingFile)
        #expect(first.description == "file not found: \(absent.path)")
        let second = try #require(settingsError { () throws(SettingsError) in
            _ = try SettingsStore.options(contentsOf: options, overrides: [absent])
        })
        #expect(second.description == "file not found: \(absent.path)")
        let array = try dir.writePlist("Array.plist", "<array/>")
        #expect(settingsErrorDescription { () throws(SettingsError) in try SettingsStore.options(contentsOf: array) }
            == "\(array.path): the root is an array, expected a dict")
    }
}

