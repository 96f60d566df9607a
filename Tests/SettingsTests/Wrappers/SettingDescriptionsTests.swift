import Foundation
import SettingsPlist
import SettingsFiles
import Testing
@testable import Settings
import SettingsTestSupport

/// Settings that describe themselves: `title:` and `help:`, titles from a `Settings.bundle`
/// pane, groups and order, enum titles and locks, in the exported schema.
struct SettingDescriptionsTests {
    enum Quality: String, SettingsValue, CaseIterable { case low, high }

    struct AppSettings {
        @Setting var timeout: Double
        @Setting var quality: Quality
        @Setting var proxy: String?
        @StoredModel var profile: DescribedProfile
        let store: SettingsStore
        init(store: SettingsStore) {
            self.store = store
            _timeout = Setting("Network/timeout", default: 30.0, store: store, rules: .clamp(1...120),
                               title: "Timeout", help: "Seconds to wait for a server before giving up.")
            _quality = Setting("quality", default: Quality.high, store: store)
            _proxy = Setting<String?>("proxy", store: store, title: "Proxy")
            _profile = StoredModel("profile", store: store, title: "Profile", help: "Who is signed in.")
        }
    }

    static let pane = """
        <dict><key>PreferenceSpecifiers</key><array>
            <dict><key>Type</key><string>PSGroupSpecifier</string><key>Title</key><string>Playback</string></dict>
            <dict>
                <key>Type</key><string>PSMultiValueSpecifier</string><key>Key</key><string>quality</string>
                <key>Title</key><string>Video quality</string><key>DefaultValue</key><string>high</string>
                <key>Values</key><array><string>low</string><string>high</string></array>
                <key>Titles</key><array><string>Save data</string><string>Best picture</string></array>
            </dict>
        </array></dict>
        """

    @Test func theSchemaCarriesTitlesHelpGroupsOrderEnumTitlesAndLocks() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("xdg/App"), withIntermediateDirectories: true)
        try dir.writePlist("xdg/App/locked.plist", "<dict><key>proxy</key><string>http://proxy:3128</string></dict>")
        var options = PersistenceOptions()
        options.systemFiles = .application("App", directories: .fixed([dir.path("xdg")]))
        let store = SettingsStore.file(dir.file("home/settings.plist"), autosaveDelay: nil, externalChanges: .ignored, options: options)
        _ = try store.registerDefaults(contentsOf: try dir.writePlist("Root.plist", Self.pane))
        let schema = SettingsSchema(of: AppSettings(store: store))

        let keys = Dictionary(uniqueKeysWithValues: schema.keys.map { ($0.key.path, $0) })
        #expect(schema.keys.map(\.order) == [0, 1, 2, 3])
        #expect(keys["Network/timeout"]?.title == "Timeout" && keys["Network/timeout"]?.group == "Network")
        #expect(keys["quality"]?.title == "Video quality" && keys["quality"]?.group == "Playback")
        #expect(keys["quality"]?.allowedValueTitles == ["Save data", "Best picture"])
        #expect(keys["proxy"]?.lockedBy == dir.path("xdg/App/locked.plist"))
        #expect(keys["profile"]?.help == "Who is signed in.")

        let document = schema.jsonSchema
        let timeout = try #require(document["properties"]?["Network"]?["properties"]?["timeout"])
        #expect(timeout["title"] == "Timeout")
        #expect(timeout["description"] == "Seconds to wait for a server before giving up.")
        #expect(timeout["x-property"] == "AppSettings.timeout")
        #expect(timeout["x-order"] == 0 && timeout["x-group"] == "Network")
        let quality = try #require(document["properties"]?["quality"])
        #expect(quality["enum"] == ["low", "high"] && quality["x-enum-titles"] == ["Save data", "Best picture"])
        #expect(quality["description"] == "AppSettings.quality")  // no help: the property, as before
        let proxy = try #require(document["properties"]?["proxy"])
        #expect(proxy["readOnly"] == true && proxy["x-locked-by"] == .string(dir.path("xdg/App/locked.plist")))
        _ = try schema.checker()  // every keyword is one the tool's checker accepts

        let markdown = PlistSchemaReference.markdown(of: document)
        #expect(markdown == """
            # AppSettings

            ## Network

            | Key | Title | Type | Default | Description |
            |---|---|---|---|---|
            | `Network/timeout` | Timeout | number | `30` | Seconds to wait for a server before giving up. From `1` to `120`. |

            ## Playback

            | Key | Title | Type | Default | Description |
            |---|---|---|---|---|
            | `quality` | Video quality | string | `high` | AppSettings.quality One of: `low` (Save data), `high` (Best picture). |

            | Key | Title | Type | Default | Description |
            |---|---|---|---|---|
            | `proxy` | Proxy | string |  | AppSettings.proxy Locked by `\(dir.path("xdg/App/locked.plist"))`. |
            | `profile` | Profile | object | `{ name = Guest; }` | Who is signed in. |

            """, "\(markdown)")
    }
}

/// A model for ``SettingDescriptionsTests``.
struct DescribedProfile: SettingsModel, Codable, Equatable {
    var name = "Guest"
}
