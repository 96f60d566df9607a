#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import Settings
import SettingsTestSupport

extension SettingsStore.Key where Value == Double {
    static let optionsTimeout = Self("Options/timeout", default: 30)
}

extension SettingsStore.Key where Value == String {
    static let optionsWrongType = Self("Options/wrongTypedKey", default: "fallback")
}

/// A point stored as `{x, y}` by its own transformer; one test registers a `"x,y"` string form.
struct OptionsPoint: SettingsValue, Sendable, Equatable {
    var x: Double, y: Double
    static var settingsTransformer: SettingsTransformer<OptionsPoint> {
        SettingsTransformer(typeName: "OptionsPoint", encode: { ["x": .real($0.x), "y": .real($0.y)] }, decode: { v in
            guard let x = v["x"]?.doubleValue, let y = v["y"]?.doubleValue else { return nil }
            return OptionsPoint(x: x, y: y)
        })
    }
}

/// A type whose transformer refuses to encode anything.
struct OptionsUnstorable: SettingsValue, Sendable {
    struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }
    static var settingsTransformer: SettingsTransformer<OptionsUnstorable> {
        SettingsTransformer(typeName: "OptionsUnstorable", encode: { _ in throw Refused() }, decode: { _ in OptionsUnstorable() })
    }
}

extension SettingsStore.Key where Value == OptionsUnstorable {
    static let optionsUnstorable = Self("Options/unstorable", default: OptionsUnstorable())
}

struct OptionLookupTests {
    static let values: PlistDictionary = [
        "top": "level",
        "Network": ["timeout": 12.5, "retries": 3],
        "Paths": ["a/b": 7],
    ]

    @Test func lookUpsWithADefaultReturnTheStoredValueOrTheDefault() {
        let store = SettingsStore.inMemory(Self.values)
        #expect(store.value("Network/timeout", default: 30.0) == 12.5)
        #expect(store.value("Network/retries", default: 0) == 3)
        #expect(store.value("Network/missing", default: 4) == 4)
        #expect(store.value("absent", default: "none") == "none")
        #expect(store.value(at: "Network", "timeout", default: 0.0) == 12.5)
        #expect(store.value(at: nil, "top", default: "") == "level")
        #expect(store.value(at: "Paths", "a/b", default: 0) == 7)
        #expect(store.value(at: "Network/Nope", "timeout", default: 1.0) == 1)
    }

    @Test func aWrongTypedValueGivesTheDefaultAndIsReported() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        store.addOverrides(["Options.wrong": "not a number"])
        #expect(store.value("Options.wrong", default: 1.5) == 1.5)
        let reported = DiagnosticsRecorder.diagnostics(for: "Options.wrong")
        #expect(reported.map(\.message) == ["key 'Options.wrong' has type String, expected Double (from override file); using the default"])
        #expect(reported.map(\.kind) == [.typeMismatch])
    }

    @Test func aRegisteredTransformerWinsOverTheTypesOwn() throws {
        let store = SettingsStore.inMemory(["Options": ["point": ["x": 1.0, "y": 2.0], "text": "3,4"]])
        #expect(store.value("Options/point", default: OptionsPoint(x: 0, y: 0)) == OptionsPoint(x: 1, y: 2))
        SettingsTransformers.register(SettingsTransformer<OptionsPoint>(
            typeName: "OptionsPoint (x,y)",
            encode: { .string("\($0.x),\($0.y)") },
            decode: { v in
                let parts = v.stringValue?.split(separator: ",").compactMap { Double($0) } ?? []
                return parts.count == 2 ? OptionsPoint(x: parts[0], y: parts[1]) : nil
            }))
        defer { SettingsTransformers.unregister(OptionsPoint.self) }
        #expect(try store.requiredValue(for: "Options/text", as: OptionsPoint.self) == OptionsPoint(x: 3, y: 4))
        #expect(settingsErrorDescription { () throws(SettingsError) in try store.requiredValue(for: "Options/point", as: OptionsPoint.self) }
            == "key 'Options/point' has type Dictionary, expected OptionsPoint (x,y) (from user file)")
    }

    @Test func requiredValuesAreReturnedWithTheirTypeInferred() throws {
        let store = SettingsStore.inMemory(Self.values)
        let timeout: Double = try store.requiredValue(for: "Network/timeout")
        #expect(timeout == 12.5)
        #expect(try store.requiredValue(for: "Network/retries", as: Int.self) == 3)
        let top: String = try store.requiredValue(at: nil, "top")
        #expect(top == "level")
        #expect(try store.requiredValue(at: "Paths", "a/b", as: Int.self) == 7)
    }

    @Test(arguments: [
        ("port", "no value for key 'port'"),
        ("Server/port", "no value for key 'Server/port' (there is no namespace 'Server')"),
        ("Root/Missing/Key", "no value for key 'Root/Missing/Key' (namespace 'Root' has no dictionary 'Missing')"),
        ("Root/Sub/Key", "no value for key 'Root/Sub/Key' (namespace 'Root/Sub' has no key 'Key')"),
        ("Root/Sub/Key/More", "no value for key 'Root/Sub/Key/More' (namespace 'Root/Sub' has no dictionary 'Key')"),
        ("Root/Leaf/Key", "no value for key 'Root/Leaf/Key' ('Root/Leaf' is a string from user file, not a namespace)"),
        ("Root/Number/Key", "no value for key 'Root/Number/Key' ('Root/Number' is an integer from registered defaults, not a namespace)"),
        ("Root/Deep/Key", "no value for key 'Root/Deep/Key' (namespace 'Root/Deep' has no key 'Key')"),
    ])
    func aMissingKeySaysWhichPartOfItsPathExists(key: String, description: String) {
        let store = SettingsStore.inMemory(["Root": ["Sub": ["Other": 1], "Leaf": "text"]])
        store.register(defaults: ["Root": ["Deep": [:], "Number": 5]])
        let error = settingsErrorDescription { () throws(SettingsError) in try store.requiredValue(for: SettingsKey(key), as: Int.self) }
        #expect(error == description)
    }

    @Test func theNamespaceFormNamesTheFullKey() {
        let store = SettingsStore.inMemory(["Root": ["Sub": ["Other": 1]]])
        #expect(settingsErrorDescription { () throws(SettingsError) in try store.requiredValue(at: "Root/Sub", "a/b", as: String.self) }
            == #"no value for key 'Root/Sub/a\/b' (namespace 'Root/Sub' has no key 'a\/b')"#)
        #expect(settingsErrorDescription { () throws(SettingsError) in try store.requiredValue(at: "Root/Sub", "Other", as: String.self) }
            == "key 'Root/Sub/Other' has type Int, expected String (from user file)")
        #expect(settingsErrorDescription { () throws(SettingsError) in try store.requiredValue(at: nil, "Root", as: Bool.self) }
            == "key 'Root' has type Dictionary, expected Bool (from user file)")
    }

    @Test func aTypeMismatchNamesBothTypesAndTheLayer() throws {
        let store = SettingsStore.inMemory()
        store.register(defaults: ["Server": ["port": "eighty"]])
        let error = try #require(settingsError { () throws(SettingsError) in _ = try store.requiredValue(for: "Server/port", as: Int.self) })
        #expect(error.code == .typeMismatch)
        #expect(error.expectedType == "Int")
        #expect(error.foundType == "String")
        #expect(error.source == .defaults)
        #expect(error.description == "key 'Server/port' has type String, expected Int (from registered defaults)")
        store.setVolatile(true, for: "Server/port")
        #expect(settingsErrorDescription { () throws(SettingsError) in try store.requiredValue(for: "Server/port", as: Double.self) }
            == "key 'Server/port' has type Bool, expected Double (from volatile)")
    }

    @Test func theErrorCodesAndKeysAreSetForCallersThatMatchOnThem() throws {
        let store = SettingsStore.inMemory(["Root": ["Sub": [:]]])
        let error = try #require(settingsError { () throws(SettingsError) in _ = try store.requiredValue(at: "Root/Sub", "Key", as: Int.self) })
        #expect(error.code == .missingKey)
        #expect(error.key == "Root/Sub/Key")
        #expect(error.detail == "namespace 'Root/Sub' has no key 'Key'")
    }
}

struct TypedKeyTests {
    @Test func aTypedKeyReadsItsDefaultAndWritesTheUserLayer() {
        let store = SettingsStore.inMemory()
        #expect(SettingsStore.Key<Double>.optionsTimeout.key == "Options/timeout")
        #expect(SettingsStore.Key<Double>.optionsTimeout.defaultValue == 30)
        #expect(store[.optionsTimeout] == 30)
        store[.optionsTimeout] = 12.5
        #expect(store["Options/timeout"] == 12.5)
        #expect(store.source(of: "Options/timeout") == .user)
        store[.optionsTimeout] += 1
        #expect(store[.optionsTimeout] == 13.5)
        store.setVolatile(1, for: "Options/timeout")
        #expect(store[.optionsTimeout] == 1)
    }

    @Test func aWrongTypedValueReadsAsTheKeysDefaultAndIsReported() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory(["Options": ["wrongTypedKey": 5]])
        #expect(store[.optionsWrongType] == "fallback")
        #expect(DiagnosticsRecorder.diagnostics(for: "Options/wrongTypedKey").map(\.message)
            == ["key 'Options/wrongTypedKey' has type Int, expected String (from user file); using the default"])
    }

    @Test func aValueThatCannotBeEncodedIsReportedAndNotWritten() {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        store[.optionsUnstorable] = OptionsUnstorable()
        #expect(store["Options/unstorable"] == nil)
        let reported = DiagnosticsRecorder.diagnostics(for: "Options/unstorable")
        #expect(reported.map(\.message) == ["cannot store a OptionsUnstorable under 'Options/unstorable': refused; the value was not written"])
        #expect(reported.map(\.kind) == [.typeMismatch])
    }
}
