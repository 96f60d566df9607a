import Settings
import Testing

/// What a ``SettingsError`` says.
struct SettingsErrorTests {
    /// "has type string, expected Bool" named one type as plists do and the other as Swift does.
    @Test func typeMismatchesNameBothTypesAsSwiftTypes() throws {
        let store = SettingsStore.inMemory(["flag": "yes", "list": [1], "table": ["a": 1], "count": 2.5])
        let error = try #require(throws: SettingsError.self) { let _: Bool = try store.requiredValue(for: "flag") }
        #expect(error.description == "key 'flag' has type String, expected Bool (from user file)")
        #expect(error.foundType == "String")
        #expect(SettingsError(.typeMismatch, key: "list", expectedType: "Int", foundType: "array").description
            == "key 'list' has type Array, expected Int")
        #expect(SettingsError(.typeMismatch, key: "table", expectedType: "Int", foundType: "dict").foundType == "Dictionary")
        #expect(SettingsError(.typeMismatch, key: "count", expectedType: "Int", foundType: "real").foundType == "Double")
    }
}
