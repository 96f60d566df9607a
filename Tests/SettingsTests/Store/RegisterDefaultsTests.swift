#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import Settings
import SettingsTestSupport

struct RegisterDefaultsTests {
    @Test func aDefaultsFileIsMergedDeeplyOverEarlierRegistrations() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Defaults.plist", """
            <dict>
                <key>Network</key>
                <dict><key>timeout</key><integer>30</integer><key>retries</key><integer>3</integer></dict>
                <key>autoPlay</key><false/>
            </dict>
            """)
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Network": ["proxy": "cache.local", "timeout": 10]])
        let warnings = try store.registerDefaults(contentsOf: url)
        #expect(warnings.isEmpty)
        #expect(store.contents(of: .defaults) == ["Network": ["proxy": "cache.local", "timeout": 30, "retries": 3], "autoPlay": false])
        #expect(store.source(of: "Network/retries") == .defaults)
        #expect(store.contents(of: .user).isEmpty)
    }

    @Test func aBinaryDefaultsFileReadsTheSame() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("Defaults.bplist")
        try PlistValue.dictionary(["Network": ["timeout": 30.5]]).write(to: url, format: .binary)
        let store = SettingsStore.inMemory()
        try store.registerDefaults(contentsOf: url)
        #expect(store["Network/timeout"] == 30.5)
    }

    @Test func aMissingFileIsAMissingFileError() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("Absent.plist")
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.code == .missingFile)
        #expect(error.path == url.path)
        #expect(error.description == "file not found: \(url.path)")
    }

    @Test func anUnparsableFileCarriesThePlistErrorWithItsPosition() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Broken.plist", """
            <dict>
                <key>timeout</key><integr>30</integr>
            </dict>
            """)
        let store = SettingsStore.inMemory()
        store.register(defaults: ["kept": true])
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.code == .invalidFile)
        #expect(error.path == url.path)
        let underlying = try #require(error.underlying)
        #expect(underlying.position == .line(5, column: 23))
        #expect(error.description == "\(url.path):5:23: \(underlying.message)")
        #expect(store.contents(of: .defaults) == ["kept": true])
    }

    @Test func aRootThatIsNotADictionaryIsAnInvalidFile() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("List.plist", "<array><string>a</string></array>")
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.code == .invalidFile)
        #expect(error.underlying == nil)
        #expect(error.description == "\(url.path): the root is an array, expected a dict")
        let integerRoot = try dir.writePlist("Number.plist", "<integer>1</integer>")
        let second = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: integerRoot) })
        #expect(second.description == "\(integerRoot.path): the root is an integer, expected a dict")
    }

    @Test func aDirectoryIsAnInvalidFileNotAMissingOne() throws {
        let dir = try TemporaryDirectory()
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: dir.url) })
        #expect(error.code == .invalidFile)
        #expect(error.underlying?.code == .io)
        #expect(error.description.hasPrefix("\(dir.url.path): cannot read file: "))
    }

    @Test func invalidFileDescriptionsPutTheFileFirst() {
        #expect(SettingsError(.invalidFile, path: "/etc/x.plist", detail: "the root is a string, expected a dict").description
            == "/etc/x.plist: the root is a string, expected a dict")
        #expect(SettingsError(.invalidFile, path: "/etc/x.plist").description == "invalid file /etc/x.plist")
        #expect(SettingsError(.invalidFile, detail: "no file given").description == "invalid file ? (no file given)")
        let parse = PlistError(.syntax, "unexpected text", at: .line(2, column: 7))
        #expect(SettingsError(.invalidFile, path: "/etc/x.plist", underlying: parse, detail: "while loading").description
            == "/etc/x.plist:2:7: unexpected text (while loading)")
    }

    @Test func aDictionaryRegistrationReturnsNoWarningsWithoutASettingsValue() {
        let store = SettingsStore.inMemory()
        #expect(store.registerDefaults(["a": 1]).isEmpty)
        #expect(store["a"] == 1)
    }
}
