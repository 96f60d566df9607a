import Testing
@testable import Settings

struct SettingsKeyTests {
    @Test(arguments: [
        ("timeout", ["timeout"]),
        ("Network/Proxy/host", ["Network", "Proxy", "host"]),
        (#"Paths/a\/b"#, ["Paths", "a/b"]),
        (#"back\\slash"#, [#"back\slash"#]),
        ("", [""]),
        ("a//b", ["a", "", "b"]),
    ])
    func parsesPaths(path: String, components: [String]) {
        let key = SettingsKey(path)
        #expect(key.components == components)
        #expect(SettingsKey(components: components) == key)
        #expect(SettingsKey(SettingsKey(components: components).path) == key)
    }

    @Test func componentsEscapeSlashes() {
        let key = SettingsKey(components: ["Paths", "a/b"])
        #expect(key.path == #"Paths/a\/b"#)
        #expect(key.description == #"Paths/a\/b"#)
        #expect(key.parent == "Paths")
        #expect(SettingsKey("a").parent == nil)
        #expect(SettingsKey("a").appending("b/c").components == ["a", "b/c"])
    }

    @Test func keysComeFromStringInterpolation() {
        let store = SettingsStore.inMemory()
        let prefix = "Items"
        for i in 0..<3 { store["\(prefix)/item\(i)"] = PlistValue(i) }
        #expect(store["Items/item2"] == 2)
        let key: SettingsKey = "\(prefix)/count"
        #expect(key.components == ["Items", "count"])
    }
}
