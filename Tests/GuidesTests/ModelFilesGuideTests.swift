import Foundation
import Settings
import Testing
import SettingsTestSupport

// The types of Docs/ModelFiles.md, for the checks its samples cannot show.

enum ModelGuide {
    struct Profile: SettingsModel, Codable {
        var name = "Guest"
        var volume = 0.5
        var favourites: [String] = []
        var nickname: String?
        @Transient var isEditing = false
    }

    struct Document: SettingsModel {
        @Archived var title = "Untitled"
        @Archived("Words") var wordCount = 0
        @Archived var tint = SettingsColor(hex: "#336699")!
        var selection = 0
    }

    struct ProfileV3: SettingsModel, Codable {
        var displayName = "Guest"
        var volume = 0.5
        static let migrations = SettingsMigrations { m in
            m.renameKey("name", to: "displayName", inVersion: 1)
            m.convert("volume", inVersion: 2) { old in old.doubleValue.map { .real($0 / 100) } }
            m.step(toVersion: 3) { dictionary in dictionary["legacyFlag"] = nil }
        }
    }

    struct AppSettings {
        @StoredModel var profile: Profile
        @StoredModel var document: Document
        init(store: SettingsStore) {
            _profile = StoredModel("profile", store: store)
            _document = StoredModel("document", store: store)
        }
    }
}

extension GuideSuites {
@Suite("Guide: Model files")
struct ModelFilesGuideTests {
    @Test func samplesRunAsWritten() async throws {
        let run = try await GuideRun.run(setUp: { dir in
            try PlistValue.dictionary(["timeout": 30]).write(to: dir.file("settings.plist"))
        }) {
            for sample in samplesOfModelFiles { try await sample() }
        }
        // XML, human-editable; nil and @Transient not written. The binary copy holds the same.
        #expect(try run.file("profile.plist") == ["name": "Guest", "volume": 0.5, "favourites": []])
        #expect(try run.directory.bytes("profile.bplist").starts(with: Array("bplist00".utf8)))
        #expect(try run.file("profile.bplist") == run.file("profile.plist"))
        #expect(run.shared?["profile"] == nil)   // written, then reset to Profile()
        // The store migrated once after opening, and saved.
        #expect(try run.file("settings.plist") == ["Network": ["timeout": 30], "$version": 1])
    }

    // Below, on copies: the guide's types no sample saves (Document, the migrated Profile), and
    // what the samples keep in local constants (the loaded profile, the stored model's values).
    @Test func declaringAndSavingModels() throws {
        let dir = try TemporaryDirectory()
        var profile = ModelGuide.Profile()
        profile.isEditing = true
        try profile.save(to: dir.file("profile.plist"))
        try profile.save(to: dir.file("profile.bplist"), format: .binary)
        let loaded = try ModelGuide.Profile.load(from: dir.file("profile.plist"))
        #expect(loaded.isEditing == false)
        #expect(try ModelGuide.Profile.load(from: dir.file("profile.bplist")).name == "Guest")

        var document = ModelGuide.Document()
        document.selection = 3
        try document.save(to: dir.file("doc.plist"))
        let stored = try PlistValue(contentsOf: dir.file("doc.plist"))
        #expect(stored == ["title": "Untitled", "Words": 0, "tint": "#336699"])
        #expect(try ModelGuide.Document.load(from: dir.file("doc.plist")).selection == 0)
    }

    @Test func storedModelsInAStore() {
        let store = SettingsStore.inMemory()
        let settings = ModelGuide.AppSettings(store: store)
        settings.profile.name = "Ada"
        #expect(store["profile/name"] == "Ada")
        #expect(settings.profile.volume == 0.5)
        store["profile/volume"] = 0.9                 // edited by hand
        #expect(settings.profile.volume == 0.9)
        settings.$profile.reset()
        #expect(settings.profile.name == "Guest")
    }

    @Test func migrationsOfAModelFile() throws {
        let dir = try TemporaryDirectory()
        try PlistValue.dictionary(["name": "Ada", "volume": 80, "legacyFlag": true]).write(to: dir.file())
        let profile = try ModelGuide.ProfileV3.load(from: dir.file())
        #expect(profile.displayName == "Ada" && profile.volume == 0.8)
        try profile.save(to: dir.file())
        #expect(try PlistValue(contentsOf: dir.file()) == ["displayName": "Ada", "volume": 0.8, "$version": 3])
    }
}
}
