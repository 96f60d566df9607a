#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import Settings
import SettingsTestSupport

struct SettingsBundleDefaultsTests {
    /// `Root.plist`: a group title, defaults, a key without a default, a non-string key, a child
    /// pane entry without `File`, a child pane, and a key the child also sets.
    static let root = """
        <dict>
            <key>StringsTable</key><string>Root</string>
            <key>PreferenceSpecifiers</key>
            <array>
                <dict><key>Type</key><string>PSGroupSpecifier</string><key>Title</key><string>Account</string></dict>
                <dict>
                    <key>Type</key><string>PSTextFieldSpecifier</string>
                    <key>Key</key><string>username</string>
                    <key>DefaultValue</key><string>guest</string>
                </dict>
                <dict><key>Type</key><string>PSTextFieldSpecifier</string><key>Key</key><string>password</string></dict>
                <dict><key>Key</key><integer>7</integer><key>DefaultValue</key><string>ignored</string></dict>
                <dict><key>Type</key><string>PSChildPaneSpecifier</string><key>Title</key><string>No file</string></dict>
                <dict><key>Key</key><string>shared</string><key>DefaultValue</key><string>root, before</string></dict>
                <dict>
                    <key>Type</key><string>PSChildPaneSpecifier</string>
                    <key>Title</key><string>Network</string>
                    <key>File</key><string>Network</string>
                </dict>
                <dict><key>Key</key><string>after</string><key>DefaultValue</key><true/></dict>
            </array>
        </dict>
        """

    /// `Network.plist`: defaults, a slash in a key, and panes back to the root and to itself.
    static let network = """
        <dict>
            <key>PreferenceSpecifiers</key>
            <array>
                <dict>
                    <key>Type</key><string>PSMultiValueSpecifier</string>
                    <key>Key</key><string>timeout</string>
                    <key>DefaultValue</key><integer>30</integer>
                </dict>
                <dict><key>Key</key><string>shared</string><key>DefaultValue</key><string>network</string></dict>
                <dict><key>Key</key><string>a/b</string><key>DefaultValue</key><real>1.5</real></dict>
                <dict><key>Type</key><string>PSChildPaneSpecifier</string><key>File</key><string>Root</string></dict>
                <dict><key>Type</key><string>PSChildPaneSpecifier</string><key>File</key><string>Network</string></dict>
            </array>
        </dict>
        """

    @Test func entriesAndChildPanesGiveTheDefaultsInPaneOrder() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", Self.root)
        try dir.writePlist("Network.plist", Self.network)
        let store = SettingsStore.inMemory()
        try store.registerDefaults(contentsOf: url)
        let expected: PlistDictionary = ["username": "guest", "shared": "network", "timeout": 30, "a/b": 1.5, "after": true]
        #expect(store.contents(of: .defaults) == expected)
        #expect(store[SettingsKey(components: ["a/b"])] == 1.5)
        #expect(store["password"] == nil)
    }

    @Test func aMissingChildPaneNamesTheFileAndThePaneThatRefersToIt() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", Self.root)
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.code == .missingFile)
        #expect(error.path == dir.file("Network.plist").path)
        #expect(error.description == "file not found: \(dir.file("Network.plist").path) (child pane 'Network' of \(url.path))")
        #expect(store.contents(of: .defaults).isEmpty)
    }

    @Test func anUnparsableChildPaneNamesBothFiles() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", Self.root)
        let child = try dir.write("Network.plist", "<plist><dict><key>x</key></dict></plist>")
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.code == .invalidFile)
        let underlying = try #require(error.underlying)
        #expect(underlying.position == .line(1, column: 26))
        #expect(error.description == "\(child.path):1:26: \(underlying.message) (child pane 'Network' of \(url.path))")
    }

    @Test func aChildPaneWithoutSpecifiersIsAnInvalidFile() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", Self.root)
        let child = try dir.writePlist("Network.plist", "<dict><key>timeout</key><integer>30</integer></dict>")
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.code == .invalidFile)
        #expect(error.description == "\(child.path): the settings pane has no PreferenceSpecifiers array (child pane 'Network' of \(url.path))")
    }

    @Test func aChildPaneWhoseRootIsNotADictionaryIsAnInvalidFile() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", Self.root)
        let child = try dir.writePlist("Network.plist", "<array/>")
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.description == "\(child.path): the root is an array, expected a dict (child pane 'Network' of \(url.path))")
    }

    @Test(arguments: ["../Network", "sub/Network", "", ".", ".."])
    func aChildPaneFileMustBeASiblingName(file: String) throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", """
            <dict><key>PreferenceSpecifiers</key><array>
                <dict><key>Type</key><string>PSChildPaneSpecifier</string><key>File</key><string>\(file)</string></dict>
            </array></dict>
            """)
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.code == .invalidFile)
        #expect(error.description == "\(url.path): child pane File '\(file)' is not a file name in the same directory")
    }

    @Test func anEntryThatIsNotADictionaryIsAnInvalidFile() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", """
            <dict><key>PreferenceSpecifiers</key><array>
                <dict><key>Key</key><string>first</string><key>DefaultValue</key><integer>1</integer></dict>
                <string>stray</string>
            </array></dict>
            """)
        let store = SettingsStore.inMemory()
        let error = try #require(settingsError { () throws(SettingsError) in try store.registerDefaults(contentsOf: url) })
        #expect(error.description == "\(url.path): PreferenceSpecifiers item 1 is a string, expected a dict")
        #expect(store.contents(of: .defaults).isEmpty)
    }

    @Test func preferenceSpecifiersThatAreNotAnArrayAreAPlainDefault() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Defaults.plist", "<dict><key>PreferenceSpecifiers</key><string>plain</string></dict>")
        let store = SettingsStore.inMemory()
        try store.registerDefaults(contentsOf: url)
        #expect(store.contents(of: .defaults) == ["PreferenceSpecifiers": "plain"])
    }
}
