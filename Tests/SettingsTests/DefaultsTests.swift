#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import Settings
import SettingsTestSupport

/// `fn` throws a ``SettingsError``; returns it (or records an issue and returns `nil`).
func settingsError(_ fn: () throws(SettingsError) -> Void) -> SettingsError? {
    do {
        try fn()
        Issue.record("expected a SettingsError")
        return nil
    } catch {
        return error
    }
}

// MARK: - Settings containers for the missing-default checks

struct ProxySettings: SettingsGroup {
    @Setting("Defaults.check/Network/proxy", store: .inMemory()) var proxy: String?
    @Setting("Defaults.check/Network/port", default: 8080, store: .inMemory()) var port: Int
}

struct CheckedSettings {
    @Setting("Defaults.check/name", default: "Ada", store: .inMemory()) var name: String
    @Setting("Defaults.check/volume", store: .inMemory()) var volume: Double?
    @Setting("Defaults.check/theme", store: .inMemory()) var theme: String?
    @Setting("Defaults.check/legacy", store: .inMemory(), warnsWhenDefaultIsMissing: false) var legacy: Bool?
    @ReadOnlySetting("Defaults.check/build", store: .inMemory()) var build: Int?
    var network = ProxySettings()
    var notASetting = 3
}

struct KeylessCheckedSettings {
    @Setting(store: .inMemory()) var defaultsCheckKeyless: String?
}

// MARK: - Plain defaults files

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

// MARK: - Settings.bundle

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

// MARK: - Missing-default warnings

struct MissingDefaultWarningTests {
    @Test func optionalSettingsWithoutARegisteredDefaultAreReportedExactly() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        let settings = CheckedSettings()
        let warnings = store.registerDefaults(["Defaults.check": ["volume": 0.5]], checking: settings)
        #expect(warnings.map(\.message) == [
            "setting 'Defaults.check/theme' (String?, CheckedSettings.theme) has no default in code or in the registered defaults",
            "setting 'Defaults.check/build' (Int?, CheckedSettings.build) has no default in code or in the registered defaults",
            "setting 'Defaults.check/Network/proxy' (String?, CheckedSettings.network.proxy) has no default in code or in the registered defaults",
        ])
        #expect(warnings.map(\.kind) == [.missingDefault, .missingDefault, .missingDefault])
        #expect(warnings.map(\.key) == ["Defaults.check/theme", "Defaults.check/build", "Defaults.check/Network/proxy"])
        #expect(warnings.first?.description == "settings: warning: " + (warnings.first?.message ?? ""))
        // Every warning also went to the handler (other tests use other keys).
        #expect(DiagnosticsRecorder.diagnostics(for: "Defaults.check/theme").contains(warnings[0]))
        #expect(DiagnosticsRecorder.diagnostics(for: "Defaults.check/Network/proxy").contains(warnings[2]))
    }

    @Test func everyRegistrationSoFarCountsAndTheFileIsNamed() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Defaults.plist", """
            <dict><key>Defaults.check</key><dict>
                <key>theme</key><string>dark</string>
                <key>Network</key><dict><key>proxy</key><string>none</string></dict>
            </dict></dict>
            """)
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Defaults.check": ["volume": 1.0]])
        let warnings = try store.registerDefaults(contentsOf: url, checking: CheckedSettings())
        #expect(warnings.map(\.message) == [
            "setting 'Defaults.check/build' (Int?, CheckedSettings.build) has no default in code or in Defaults.plist",
        ])
        store.register(defaults: ["Defaults.check": ["build": 1]])
        #expect(store.registerDefaults([:], checking: CheckedSettings()).isEmpty)
    }

    @Test func aUserValueIsNotADefault() {
        let store = SettingsStore.inMemory(["Defaults.check": ["theme": "light", "volume": 1.0, "build": 2, "Network": ["proxy": "p"]]])
        let warnings = store.registerDefaults([:], checking: CheckedSettings())
        #expect(warnings.map(\.key) == ["Defaults.check/volume", "Defaults.check/theme", "Defaults.check/build", "Defaults.check/Network/proxy"])
    }

    @Test func keylessSettingsAreBoundToTheirDerivedKeysFirst() {
        let store = SettingsStore.inMemory()
        let settings = KeylessCheckedSettings()
        #expect(settings.$defaultsCheckKeyless.key == nil)
        let warnings = store.registerDefaults([:], checking: settings)
        #expect(settings.$defaultsCheckKeyless.key == "DefaultsCheckKeyless")
        #expect(warnings.map(\.message) == [
            "setting 'DefaultsCheckKeyless' (String?, KeylessCheckedSettings.defaultsCheckKeyless) has no default in code or in the registered defaults",
        ])
        #expect(store.registerDefaults(["DefaultsCheckKeyless": "x"], checking: settings).isEmpty)
    }

    @Test func aSettingsBundleIsNamedByItsRootFile() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.writePlist("Root.plist", """
            <dict><key>PreferenceSpecifiers</key><array>
                <dict><key>Key</key><string>DefaultsCheckKeyless</string><key>DefaultValue</key><string>x</string></dict>
            </array></dict>
            """)
        let store = SettingsStore.inMemory()
        let warnings = try store.registerDefaults(contentsOf: url, checking: CheckedSettings())
        #expect(warnings.first?.message == "setting 'Defaults.check/volume' (Double?, CheckedSettings.volume) has no default in code or in Root.plist")
        #expect(warnings.count == 4)
        #expect(try store.registerDefaults(contentsOf: url, checking: KeylessCheckedSettings()).isEmpty)
    }

    @Test func aCustomTypeIsNamedByItsTransformer() {
        struct Celsius: SettingsValue, Sendable {
            var degrees: Double
            static var settingsTransformer: SettingsTransformer<Celsius> {
                SettingsTransformer(typeName: "Celsius", encode: { .real($0.degrees) }, decode: { $0.doubleValue.map(Celsius.init) })
            }
        }
        struct Weather { @Setting("Defaults.check/outside", store: .inMemory()) var outside: Celsius? }
        let store = SettingsStore.inMemory()
        #expect(store.registerDefaults([:], checking: Weather()).map(\.message) == [
            "setting 'Defaults.check/outside' (Celsius?, Weather.outside) has no default in code or in the registered defaults",
        ])
    }
}

// MARK: - Override files

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
