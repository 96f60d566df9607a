import Foundation
import SettingsPlist
import SettingsFiles
import Testing

struct PlistSchemaTests {
    let schema: PlistSchema

    init() throws {
        schema = try PlistSchema([
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": [
                "Network": ["type": "object", "properties": [
                    "timeout": ["type": "number", "minimum": 1, "maximum": 120, "default": 30.0],
                    "retries": ["type": "integer", "exclusiveMinimum": 0],
                ]],
                "theme": ["type": "string", "enum": ["light", "dark"]],
                "apiToken": ["type": "string", "x-secret": true],
                "seen": ["type": "string", "format": "date-time"],
                "avatar": ["type": "string", "contentEncoding": "base64"],
                "tags": ["type": "array", "items": ["type": "string"]],
            ],
            "x-note": "annotations and x- keywords are accepted",
        ])
    }

    @Test func valuesThatFitHaveNoViolations() {
        let good: PlistValue = [
            "Network": ["timeout": 45.5, "retries": 3.0], "theme": "dark", "apiToken": "abc",
            "seen": .date(Date(timeIntervalSinceReferenceDate: 0)), "avatar": .data(Data([1, 2])),
            "tags": ["a", "b"], "other": ["kept": true],
        ]
        #expect(schema.violations(of: good).isEmpty)
    }

    @Test func eachViolationNamesKeyValueAndRule() {
        let bad: PlistValue = [
            "Network": ["timeout": 500, "retries": 0],
            "theme": "blue",
            "tags": ["a", 7],
            "seen": "yesterday",
            "avatar": "AQI=",
        ]
        #expect(schema.violations(of: bad).map(\.description) == [
            "key 'Network/timeout': 500 does not fit \"maximum\": 120",
            "key 'Network/retries': 0 does not fit \"exclusiveMinimum\": 0",
            "key 'theme': \"blue\" does not fit \"enum\": [\"light\", \"dark\"]",
            "key 'tags[1]': 7 does not fit \"type\": \"string\"",
            "key 'seen': \"yesterday\" does not fit \"format\": \"date-time\"",
            "key 'avatar': \"AQI=\" does not fit \"contentEncoding\": \"base64\"",
        ])
    }

    @Test func subschemaFollowsPropertiesAndAdditionalProperties() throws {
        #expect(schema.subschema(at: ["Network", "timeout"])?["maximum"] == 120)
        #expect(schema.subschema(at: ["Network", "nope"]) == nil)
        let open = try PlistSchema(["additionalProperties": ["type": "string"]])
        #expect(open.subschema(at: ["any"])?["type"] == "string")
        #expect(schema.subschema(at: []) == schema.root)
    }

    @Test func integersAcceptWholeRealsAsJSONSchemaDoes() throws {
        let schema = try PlistSchema(["type": "integer"])
        #expect(schema.violations(of: 3.0).isEmpty)
        #expect(schema.violations(of: 3.5).map(\.description) == ["the document: 3.5 does not fit \"type\": \"integer\""])
        #expect(try PlistSchema(["enum": [1]]).violations(of: 1.0).isEmpty)
    }

    @Test func secretValuesAreRedactedInMessages() {
        let bad: PlistValue = ["apiToken": 12345, "Network": ["dbPassword": "hunter2"]]
        let strict = try? PlistSchema(["properties": ["Network": ["additionalProperties": false]]])
        #expect(schema.violations(of: bad).map(\.description) == ["key 'apiToken': <redacted> does not fit \"type\": \"string\""])
        #expect(strict?.violations(of: bad).map(\.description) == [
            "key 'Network/dbPassword': <redacted> does not fit \"additionalProperties\": false (no key 'dbPassword' in \"properties\")",
        ])
    }

    @Test func requiredKeysAreReported() throws {
        let schema = try PlistSchema(["required": ["name"], "properties": ["name": ["type": "string"]]])
        #expect(schema.violations(of: ["other": 1]).map(\.description) == [
            "the document: a dict of 1 key does not fit \"required\": [\"name\"] (no key 'name')",
        ])
    }

    @Test(arguments: [
        ("pattern", "/properties/name/pattern"),
        ("$ref", "/properties/name/$ref"),
        ("anyOf", "/properties/name/anyOf"),
    ])
    func keywordsNotImplementedAreRefusedNotIgnored(keyword: String, pointer: String) {
        let document: PlistValue = ["properties": ["name": .dictionary([keyword: "x"])]]
        #expect {
            try PlistSchema(document)
        } throws: { error in
            let invalid = error as? PlistSchema.Invalid
            return invalid?.pointer == pointer && invalid?.description.contains("'\(keyword)' is not supported") == true
        }
    }

    @Test func malformedKeywordValuesAreRefused() {
        #expect(throws: PlistSchema.Invalid.self) { try PlistSchema(["type": "text"]) }
        #expect(throws: PlistSchema.Invalid.self) { try PlistSchema(["maximum": "ten"]) }
        #expect(throws: PlistSchema.Invalid.self) { try PlistSchema(["contentEncoding": "base32"]) }
        #expect(throws: PlistSchema.Invalid.self) { try PlistSchema(["properties": ["a": 1]]) }
    }

    /// Schema and value nesting are input: both are walked with a work list, not the call stack.
    @Test func deepNestingIsCheckedWithoutRecursion() throws {
        let depth = 5_000
        var document: PlistValue = ["type": "integer"]
        var value: PlistValue = "deep"
        for _ in 0..<depth {
            document = ["properties": ["k": document]]
            value = ["k": value]
        }
        let violations = try PlistSchema(document).violations(of: value)
        #expect(violations.count == 1)
        #expect(violations.first?.keyPath == Array(repeating: "k", count: depth).joined(separator: "/"))
    }

    @Test func jsonInstanceTextWritesDatesAsISO8601AndDataAsBase64() throws {
        let value: PlistValue = ["seen": .date(Date(timeIntervalSinceReferenceDate: 0.5)), "avatar": .data(Data([1, 2]))]
        #expect(try value.jsonInstanceText() == "{\n  \"seen\": \"2001-01-01T00:00:00.5Z\",\n  \"avatar\": \"AQI=\"\n}")
        #expect(throws: PlistError.self) { try value.jsonText() }
    }
}
