#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import Testing
@testable import Settings

// MARK: - Types under test

// Conforming is all it takes: the transformers come from SettingsValue's protocol extensions.
enum TxTheme: String, Sendable, SettingsValue { case light, dark, sepia }
enum TxLevel: Int, Sendable, SettingsValue { case low = 1, high = 2 }
enum TxCodableTheme: String, Codable, Sendable, SettingsValue { case light, dark }

struct TxProfile: Codable, Equatable, Sendable, SettingsValue {
    var name = "Ada"
    var age = 36
    var homepage = URL(string: "https://example.com/ada")
    var tags: [String] = ["math"]
}

/// A type only these tests use, so registering a transformer for it cannot disturb other suites.
struct TxCelsius: SettingsValue, Equatable, Sendable {
    var degrees: Double
    static var settingsTransformer: SettingsTransformer<TxCelsius> {
        Double.settingsTransformer.mapped(typeName: "TxCelsius", to: { $0.degrees }, from: { TxCelsius(degrees: $0) })
    }
}

/// Counts how often its built-in transformer is asked for.
struct TxCounted: SettingsValue, Equatable, Sendable {
    static let transformerRequests = Atomic<Int>(0)
    var value: Int
    static var settingsTransformer: SettingsTransformer<TxCounted> {
        transformerRequests.add(1, ordering: .relaxed)
        return Int.settingsTransformer.mapped(typeName: "TxCounted", to: { $0.value }, from: { TxCounted(value: $0) })
    }
}

/// One store shared by the attribute-syntax declarations below (unique keys per test).
let transformerTestStore = SettingsStore.inMemory()

/// The zero-boilerplate spellings, as users write them: this compiling is half the test.
struct TxDeclaredSettings {
    @Setting("tx.decl.theme", default: TxTheme.dark, store: transformerTestStore) var theme: TxTheme
    @Setting("tx.decl.codableTheme", default: TxCodableTheme.dark, store: transformerTestStore) var codableTheme: TxCodableTheme
    @Setting("tx.decl.profile", default: TxProfile(), store: transformerTestStore) var profile: TxProfile
    @Setting("tx.decl.optionalTheme", store: transformerTestStore) var optionalTheme: TxTheme?
    @Setting("tx.decl.optionalCodableTheme", store: transformerTestStore) var optionalCodableTheme: TxCodableTheme?
    @Setting("tx.decl.optionalProfile", store: transformerTestStore) var optionalProfile: TxProfile?
    @Setting("tx.decl.name", default: "x", store: transformerTestStore) var name: String
    @Setting("tx.decl.accent", default: SettingsColor.black, store: transformerTestStore) var accent: SettingsColor
    @Setting("tx.decl.profiles", default: [TxProfile](), store: transformerTestStore) var profiles: [TxProfile]
    @ReadOnlySetting("tx.decl.roTheme", default: TxTheme.light, store: transformerTestStore) var roTheme: TxTheme
    @ReadOnlySetting("tx.decl.roCodableTheme", default: TxCodableTheme.light, store: transformerTestStore) var roCodableTheme: TxCodableTheme
    @ReadOnlySetting("tx.decl.roProfile", default: TxProfile(), store: transformerTestStore) var roProfile: TxProfile
    @ReadOnlySetting("tx.decl.roOptionalTheme", store: transformerTestStore) var roOptionalTheme: TxTheme?
    @ReadOnlySetting("tx.decl.roOptionalCodableTheme", store: transformerTestStore) var roOptionalCodableTheme: TxCodableTheme?
    @ReadOnlySetting("tx.decl.roOptionalProfile", store: transformerTestStore) var roOptionalProfile: TxProfile?
}

// MARK: - Round trips

/// One built-in type's round trip: write through a setting, check the stored plist value, and
/// read it back through a fresh setting and from a store that starts with the stored value.
struct RoundTrip: Sendable, CustomTestStringConvertible {
    let name: String
    let stored: PlistValue
    /// Writes and reads back; returns what was stored and whether both reads gave the value.
    let run: @Sendable (SettingsStore) -> (stored: PlistValue?, readBack: Bool, readFromStored: Bool)

    var testDescription: String { name }

    static func value<T: SettingsValue & Equatable & Sendable>(_ name: String, _ value: T, default fallback: T, stored: PlistValue) -> RoundTrip {
        RoundTrip(name: name, stored: stored) { store in
            Setting("rt", default: fallback, store: store).wrappedValue = value
            let readBack = Setting("rt", default: fallback, store: store).wrappedValue == value
            let readFromStored = Setting("rt", default: fallback, store: .inMemory(["rt": stored])).wrappedValue == value
            return (store["rt"], readBack, readFromStored)
        }
    }

    static func raw<T: RawRepresentable & SettingsValue & Equatable & Sendable>(_ name: String, _ value: T, default fallback: T, stored: PlistValue) -> RoundTrip
    where T.RawValue: SettingsValue & Sendable {
        RoundTrip(name: name, stored: stored) { store in
            Setting("rt", default: fallback, store: store).wrappedValue = value
            let readBack = Setting("rt", default: fallback, store: store).wrappedValue == value
            let readFromStored = Setting("rt", default: fallback, store: .inMemory(["rt": stored])).wrappedValue == value
            return (store["rt"], readBack, readFromStored)
        }
    }

    static func codable<T: Codable & Equatable & Sendable>(_ name: String, _ value: T, default fallback: T, stored: PlistValue) -> RoundTrip {
        RoundTrip(name: name, stored: stored) { store in
            Setting("rt", default: fallback, store: store, transformer: .codable).wrappedValue = value
            let readBack = Setting("rt", default: fallback, store: store, transformer: .codable).wrappedValue == value
            let readFromStored = Setting("rt", default: fallback, store: .inMemory(["rt": stored]), transformer: .codable).wrappedValue == value
            return (store["rt"], readBack, readFromStored)
        }
    }
}

private let sampleUUID = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()
private let sampleDate = Date(timeIntervalSinceReferenceDate: 700_000_000)

private let roundTrips: [RoundTrip] = [
    .value("Bool", true, default: false, stored: .bool(true)),
    .value("Int", -5, default: 0, stored: -5),
    .value("Int.max", Int.max, default: 0, stored: .integer(PlistInteger(Int64.max))),
    .value("Int8.min", Int8.min, default: 0, stored: -128),
    .value("Int16.max", Int16.max, default: 0, stored: 32767),
    .value("Int32.min", Int32.min, default: 0, stored: -2_147_483_648),
    .value("Int64.min", Int64.min, default: 0, stored: .integer(PlistInteger(Int64.min))),
    .value("UInt", UInt(42), default: 0, stored: 42),
    .value("UInt8.max", UInt8.max, default: 0, stored: 255),
    .value("UInt16.max", UInt16.max, default: 0, stored: 65535),
    .value("UInt32.max", UInt32.max, default: 0, stored: 4_294_967_295),
    .value("UInt64.max", UInt64.max, default: 0, stored: .integer(PlistInteger(UInt64.max))),
    .value("Float 0.1 (shortest digits)", Float(0.1), default: 0, stored: .real(0.1)),
    .value("Float.greatestFiniteMagnitude", Float.greatestFiniteMagnitude, default: 0, stored: .real(3.4028235e38)),
    .value("Double", 1.5, default: 0, stored: .real(1.5)),
    .value("Double.infinity", Double.infinity, default: 0, stored: .real(.infinity)),
    .value("String", "héllo", default: "", stored: .string("héllo")),
    .value("Date", sampleDate, default: Date(timeIntervalSinceReferenceDate: 0), stored: .date(sampleDate)),
    .value("Data", Data([0, 1, 2, 255]), default: Data(), stored: .data(Data([0, 1, 2, 255]))),
    .value("URL https", URL(string: "https://example.com/a?b=c#d") ?? URL(filePath: "/"), default: URL(filePath: "/"),
           stored: .string("https://example.com/a?b=c#d")),
    .value("URL file as its absolute string", URL(filePath: "/tmp/My Files/a.txt"), default: URL(filePath: "/"),
           stored: .string("file:///tmp/My%20Files/a.txt")),
    .value("URL directory keeps its slash", URL(filePath: "/tmp/dir/", directoryHint: .isDirectory), default: URL(filePath: "/"),
           stored: .string("file:///tmp/dir/")),
    .value("URL file with host stays a URL", URL(string: "file://localhost/tmp/x") ?? URL(filePath: "/"), default: URL(filePath: "/"),
           stored: .string("file://localhost/tmp/x")),
    .value("URL file with encoded slash stays a URL", URL(string: "file:///tmp/a%2Fb") ?? URL(filePath: "/"), default: URL(filePath: "/"),
           stored: .string("file:///tmp/a%2Fb")),
    .value("UUID", sampleUUID, default: UUID(), stored: .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F")),
    .value("SettingsColor opaque", SettingsColor(hex: "#FF8800") ?? .black, default: .black, stored: .string("#FF8800")),
    .value("SettingsColor translucent", SettingsColor(hex: "#ff880080") ?? .black, default: .black, stored: .string("#FF880080")),
    .value("[Int]", [1, 2, 3], default: [], stored: [1, 2, 3]),
    .value("[String: Double] (keys sorted)", ["b": 2.5, "a": 1], default: [:], stored: ["a": 1.0, "b": 2.5]),
    .value("[[SettingsColor]]", [[SettingsColor.white], []], default: [], stored: [["#FFFFFF"], []]),
    .value("[String: [UInt64]]", ["big": [UInt64.max]], default: [:], stored: ["big": [.integer(PlistInteger(UInt64.max))]]),
    .raw("enum: String", TxTheme.sepia, default: .dark, stored: "sepia"),
    .raw("enum: Int", TxLevel.high, default: .low, stored: 2),
    .raw("enum: String, Codable", TxCodableTheme.light, default: .dark, stored: "light"),
    .codable("Codable struct", TxProfile(name: "Grace", age: 85, homepage: nil, tags: []), default: TxProfile(),
             stored: ["name": "Grace", "age": 85, "tags": []]),
    .codable("[Codable struct]", [TxProfile()], default: [],
             stored: [["name": "Ada", "age": 36, "homepage": "https://example.com/ada", "tags": ["math"]]]),
    .codable("Set<String> via Codable", Set(["only"]), default: [], stored: ["only"]),
]

@Suite(.serialized)
struct TransformerTests {
    @Test(arguments: roundTrips)
    func builtInTypesRoundTripAndStoreReadableValues(_ trip: RoundTrip) {
        let result = trip.run(.inMemory())
        #expect(result.stored == trip.stored)
        #expect(result.readBack)
        #expect(result.readFromStored)
    }

    // MARK: Zero-boilerplate declarations

    @Test func declaredSettingsStoreRawValuesAndNestedValues() {
        let settings = TxDeclaredSettings()
        settings.theme = .sepia
        settings.codableTheme = .light
        settings.profile = TxProfile(name: "Grace", age: 85, homepage: nil, tags: ["navy"])
        settings.optionalTheme = .light
        settings.optionalCodableTheme = .dark
        settings.optionalProfile = TxProfile()
        settings.name = "plain"
        settings.accent = .white
        settings.profiles = [TxProfile()]

        let store = transformerTestStore
        #expect(store["tx.decl.theme"] == "sepia")
        #expect(store["tx.decl.codableTheme"] == "light")  // the raw value, not a Codable wrapper
        #expect(store["tx.decl.profile"] == ["name": "Grace", "age": 85, "tags": ["navy"]])
        #expect(store["tx.decl.optionalTheme"] == "light")
        #expect(store["tx.decl.optionalCodableTheme"] == "dark")
        #expect(store["tx.decl.optionalProfile"]?["homepage"] == "https://example.com/ada")
        #expect(store["tx.decl.name"] == "plain")
        #expect(store["tx.decl.accent"] == "#FFFFFF")
        #expect(store["tx.decl.profiles"]?[0]?["name"] == "Ada")
        #expect(settings.theme == .sepia && settings.codableTheme == .light && settings.profile.tags == ["navy"])
        #expect(settings.optionalTheme == .light && settings.optionalCodableTheme == .dark && settings.optionalProfile == TxProfile())

        // The transformer each spelling picked, by the type name it reports.
        #expect(settings.$codableTheme.box.typeName == "TxCodableTheme")
        #expect(settings.$name.box.typeName == "String")

        settings.optionalTheme = nil
        #expect(store["tx.decl.optionalTheme"] == nil)
        #expect(settings.optionalTheme == nil)
    }

    @Test func readOnlySettingsReadEveryForm() {
        let settings = TxDeclaredSettings()
        #expect(settings.roTheme == .light)
        #expect(settings.roOptionalProfile == nil)
        transformerTestStore.addOverrides([
            "tx.decl.roTheme": "dark", "tx.decl.roCodableTheme": "dark",
            "tx.decl.roProfile": ["name": "Lin", "age": 7, "tags": []],
            "tx.decl.roOptionalTheme": "sepia", "tx.decl.roOptionalCodableTheme": "light",
            "tx.decl.roOptionalProfile": ["name": "Max", "age": 1, "tags": ["x"]],
        ])
        #expect(settings.roTheme == .dark)
        #expect(settings.roCodableTheme == .dark)
        #expect(settings.roProfile == TxProfile(name: "Lin", age: 7, homepage: nil, tags: []))
        #expect(settings.roOptionalTheme == .sepia)
        #expect(settings.roOptionalCodableTheme == .light)
        #expect(settings.roOptionalProfile == TxProfile(name: "Max", age: 1, homepage: nil, tags: ["x"]))
        #expect(settings.$roProfile.source == .overrides)
    }

    @Test func settingsValueTypesKeepTheirOwnTransformerOverCodable() {
        // Int and [String] are Codable too: the SettingsValue form must win.
        let store = SettingsStore.inMemory()
        let count = Setting("tx.int", default: 3, store: store)
        count.wrappedValue = 4
        #expect(store["tx.int"] == 4)
        #expect(count.box.typeName == "Int")
        let words = Setting("tx.words", default: ["a"], store: store)
        #expect(words.box.typeName == "[String]")
    }

    // MARK: Mismatches

    /// The diagnostic for reading `stored` at a fresh key through `read`.
    private func diagnostic(_ key: SettingsKey, stored: PlistValue, layer: SettingsLayer = .user,
                            read: (SettingsStore) -> Bool) -> [String] {
        DiagnosticsRecorder.start()
        let store = SettingsStore.inMemory()
        switch layer {
        case .defaults: store.register(defaults: PlistDictionary([(key.path, stored)]))
        case .overrides: store.addOverrides(PlistDictionary([(key.path, stored)]))
        default: store[key] = stored
        }
        #expect(read(store), "the read gives the default")
        return DiagnosticsRecorder.diagnostics(for: key).map(\.message)
    }

    @Test func aWrongPlistTypeReadsAsTheDefaultAndNamesKeyLayerAndTypes() {
        let messages = diagnostic("tx.bad.type", stored: "loud") { Setting("tx.bad.type", default: UInt8(5), store: $0).wrappedValue == 5 }
        #expect(messages == ["key 'tx.bad.type' has type String, expected UInt8 (from user file); using the default"])
    }

    @Test func anOutOfRangeIntegerIsAMismatchNotATrap() {
        let messages = diagnostic("tx.bad.range", stored: 300, layer: .defaults) {
            Setting("tx.bad.range", default: UInt8(5), store: $0).wrappedValue == 5
        }
        #expect(messages == ["key 'tx.bad.range' has type Int, expected UInt8 (from registered defaults) (300 is outside 0...255); using the default"])
        let huge = diagnostic("tx.bad.huge", stored: .integer(PlistInteger(UInt64.max))) {
            Setting("tx.bad.huge", default: Int64(1), store: $0).wrappedValue == 1
        }
        #expect(huge == ["key 'tx.bad.huge' has type Int, expected Int64 (from user file) (18446744073709551615 is outside -9223372036854775808...9223372036854775807); using the default"])
        let negative = diagnostic("tx.bad.negative", stored: -1) { Setting("tx.bad.negative", default: UInt64(1), store: $0).wrappedValue == 1 }
        #expect(negative == ["key 'tx.bad.negative' has type Int, expected UInt64 (from user file) (-1 is outside 0...18446744073709551615); using the default"])
    }

    @Test func aMalformedColorIsAMismatch() {
        let messages = diagnostic("tx.bad.color", stored: "#GG8800", layer: .overrides) {
            Setting("tx.bad.color", default: SettingsColor.white, store: $0).wrappedValue == .white
        }
        #expect(messages == [##"key 'tx.bad.color' has type String, expected SettingsColor (from override file) ("#GG8800" is not a color (#RGB, #RGBA, #RRGGBB or #RRGGBBAA)); using the default"##])
    }

    @Test func anUnknownRawValueIsAMismatch() {
        let messages = diagnostic("tx.bad.enum", stored: "purple") { Setting("tx.bad.enum", default: TxTheme.dark, store: $0).wrappedValue == .dark }
        #expect(messages == [#"key 'tx.bad.enum' has type String, expected TxTheme (from user file) ("purple" is not a raw value of TxTheme); using the default"#])
        let wrongRawType = diagnostic("tx.bad.enumType", stored: 2) { Setting("tx.bad.enumType", default: TxTheme.dark, store: $0).wrappedValue == .dark }
        #expect(wrongRawType == ["key 'tx.bad.enumType' has type Int, expected TxTheme (from user file); using the default"])
        let optional = diagnostic("tx.bad.enumOptional", stored: 7) { Setting<TxLevel?>("tx.bad.enumOptional", store: $0).wrappedValue == nil }
        #expect(optional == ["key 'tx.bad.enumOptional' has type Int, expected TxLevel (from user file) (7 is not a raw value of TxLevel); using the default"])
    }

    @Test func aCodableModelMissingAFieldNamesTheCodingPath() {
        let messages = diagnostic("tx.bad.profile", stored: ["name": "Ada", "tags": []]) {
            Setting("tx.bad.profile", default: TxProfile(), store: $0).wrappedValue == TxProfile()
        }
        #expect(messages == [#"key 'tx.bad.profile' has type Dictionary, expected TxProfile (from user file) (at age: missing key "age" (expected integer)); using the default"#])
        let nested = diagnostic("tx.bad.profiles", stored: [["name": "Ada", "age": "old", "tags": []]]) {
            Setting("tx.bad.profiles", default: [TxProfile](), store: $0).wrappedValue.isEmpty
        }
        #expect(nested == [#"key 'tx.bad.profiles' has type Array, expected [TxProfile] (from user file) (at [0].age: expected integer, found string "old"); using the default"#])
    }

    @Test func aBadElementNamesItsPosition() {
        let array = diagnostic("tx.bad.element", stored: [1, 300]) { Setting("tx.bad.element", default: [UInt8](), store: $0).wrappedValue.isEmpty }
        #expect(array == ["key 'tx.bad.element' has type Array, expected [UInt8] (from user file) (at [1]: 300 is outside 0...255); using the default"])
        let nested = diagnostic("tx.bad.nested", stored: ["warm colors": ["#FFF", 3]]) {
            Setting("tx.bad.nested", default: [String: [SettingsColor]](), store: $0).wrappedValue.isEmpty
        }
        #expect(nested == [#"key 'tx.bad.nested' has type Dictionary, expected [String: [SettingsColor]] (from user file) (at ["warm colors"][1]: found Int, expected SettingsColor); using the default"#])
    }

    @Test func numbersConvertOnlyWhenExact() {
        let store = SettingsStore.inMemory(["whole": 3.0, "half": 3.5, "big": .integer(PlistInteger(Int64(1) << 53 + 1)), "floatBig": 1e300])
        #expect(Setting("whole", default: 0, store: store).wrappedValue == 3)
        #expect(Setting("half", default: 0, store: store).wrappedValue == 0)
        #expect(Setting("big", default: 0.0, store: store).wrappedValue == 0)
        #expect(Setting("big", default: Int64(0), store: store).wrappedValue == 1 << 53 + 1)
        #expect(Setting("floatBig", default: Float(1), store: store).wrappedValue == 1)
        DiagnosticsRecorder.start()
        let key: SettingsKey = "tx.bad.real"
        let reals = SettingsStore.inMemory(["tx.bad.real": 2.5])
        #expect(Setting(key, default: Int16(0), store: reals).wrappedValue == 0)
        #expect(DiagnosticsRecorder.diagnostics(for: key).map(\.message) == ["key 'tx.bad.real' has type Double, expected Int16 (from user file) (2.5 is not a whole number); using the default"])
    }

    @Test func malformedURLsAndUUIDsAreMismatches() {
        let store = SettingsStore.inMemory(["url": "", "uuid": "not-a-uuid", "lower": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"])
        let fallback = URL(filePath: "/fallback")
        #expect(Setting("url", default: fallback, store: store).wrappedValue == fallback)
        #expect(Setting("uuid", default: sampleUUID, store: store).wrappedValue == sampleUUID)
        #expect(Setting("lower", default: UUID(), store: store).wrappedValue == sampleUUID)
        store["url"] = "file:///tmp/a%20b"
        #expect(Setting("url", default: fallback, store: store).wrappedValue == URL(filePath: "/tmp/a b"))
    }

    /// URLs are stored as their absolute string (`file:///…`), as MFDynamic and `Codable` store
    /// them; plain paths, as earlier versions wrote them, still read.
    @Test func fileURLsAreStoredAbsoluteAndPlainPathsStillRead() {
        let store = SettingsStore.inMemory(["old": "/Users/ada/My Files/", "oldFile": "/tmp/a b.txt"])
        let fallback = URL(filePath: "/fallback")
        let url = Setting("new", default: fallback, store: store)
        url.wrappedValue = URL(filePath: "/Users/ada/My Files/", directoryHint: .isDirectory)
        #expect(store["new"] == "file:///Users/ada/My%20Files/")
        #expect(Setting("old", default: fallback, store: store).wrappedValue == URL(filePath: "/Users/ada/My Files/", directoryHint: .isDirectory))
        #expect(Setting("oldFile", default: fallback, store: store).wrappedValue == URL(filePath: "/tmp/a b.txt"))
    }

    // MARK: Registration

    @Test func aRegisteredTransformerWinsUnlessTheSettingNamesItsOwn() {
        let store = SettingsStore.inMemory()
        let plain = Setting("tx.reg.plain", default: TxCelsius(degrees: 20), store: store)
        let tenths = SettingsTransformer<TxCelsius>(
            typeName: "TxCelsius (tenths)", encode: { .integer(PlistInteger(Int64(($0.degrees * 10).rounded()))) },
            decode: { $0.int64Value.map { TxCelsius(degrees: Double($0) / 10) } })
        let own = Setting("tx.reg.own", default: TxCelsius(degrees: 20), store: store, transformer: tenths)
        let list = Setting("tx.reg.list", default: [TxCelsius](), store: store)

        plain.wrappedValue = TxCelsius(degrees: 21.5)
        own.wrappedValue = TxCelsius(degrees: 21.5)
        #expect(store["tx.reg.plain"] == 21.5)
        #expect(store["tx.reg.own"] == 215)

        let text = SettingsTransformer<TxCelsius>(
            typeName: "TxCelsius (text)", encode: { .string("\($0.degrees) C") },
            decode: { plist in plist.stringValue.flatMap { Double($0.dropLast(2)) }.map(TxCelsius.init(degrees:)) })
        SettingsTransformers.register(text)
        defer { SettingsTransformers.unregister(TxCelsius.self) }

        // Settings made before the registration pick it up; the one with its own does not.
        #expect(plain.wrappedValue == TxCelsius(degrees: 20))  // 21.5 (a real) is not text: default
        plain.wrappedValue = TxCelsius(degrees: 19)
        own.wrappedValue = TxCelsius(degrees: 19)
        list.wrappedValue = [TxCelsius(degrees: 1), TxCelsius(degrees: 2)]
        #expect(store["tx.reg.plain"] == "19.0 C")
        #expect(store["tx.reg.own"] == 190)
        #expect(store["tx.reg.list"] == ["1.0 C", "2.0 C"])
        #expect(plain.wrappedValue == TxCelsius(degrees: 19))
        #expect(list.wrappedValue == [TxCelsius(degrees: 1), TxCelsius(degrees: 2)])
        #expect(plain.box.typeName == "TxCelsius (text)")

        SettingsTransformers.unregister(TxCelsius.self)
        plain.wrappedValue = TxCelsius(degrees: 18)
        #expect(store["tx.reg.plain"] == 18.0)
        #expect(list.wrappedValue.isEmpty)  // text elements no longer read: the default
    }

    @Test func aRegisteredTransformerOverridesRawValueAndCodableStorage() {
        let store = SettingsStore.inMemory()
        let theme = Setting("tx.reg.theme", default: TxTheme.dark, store: store)
        let profile = Setting("tx.reg.profile", default: TxProfile(), store: store)
        SettingsTransformers.register(SettingsTransformer<TxTheme>(
            typeName: "TxTheme (uppercase)", encode: { .string($0.rawValue.uppercased()) },
            decode: { $0.stringValue.flatMap { TxTheme(rawValue: $0.lowercased()) } }))
        SettingsTransformers.register(SettingsTransformer<TxProfile>(
            typeName: "TxProfile (name only)", encode: { .string($0.name) },
            decode: { $0.stringValue.map { TxProfile(name: $0) } }))
        defer {
            SettingsTransformers.unregister(TxTheme.self)
            SettingsTransformers.unregister(TxProfile.self)
        }
        theme.wrappedValue = .sepia
        profile.wrappedValue = TxProfile(name: "Hopper")
        #expect(store["tx.reg.theme"] == "SEPIA")
        #expect(store["tx.reg.profile"] == "Hopper")
        #expect(theme.wrappedValue == .sepia)
        #expect(profile.wrappedValue.name == "Hopper")
    }

    @Test func transformersAreBuiltOncePerSettingNotPerRead() {
        let store = SettingsStore.inMemory()
        let before = TxCounted.transformerRequests.load(ordering: .relaxed)
        let setting = Setting("tx.counted", default: TxCounted(value: 0), store: store)
        for i in 1...5 {
            store["tx.counted"] = .integer(PlistInteger(Int64(i)))
            #expect(setting.wrappedValue == TxCounted(value: i))
            #expect(setting.wrappedValue == TxCounted(value: i))
        }
        #expect(TxCounted.transformerRequests.load(ordering: .relaxed) - before == 1)
    }

    // MARK: Library transformers

    @Test func libraryTransformersStoreTheirForms() throws {
        let store = SettingsStore.inMemory()
        let port = Setting("port", default: 8080, store: store, transformer: .string)
        port.wrappedValue = 443
        #expect(store["port"] == "443")
        let ports = Setting("ports", default: [80], store: store, transformer: .array(of: .string))
        ports.wrappedValue = [1, 2]
        #expect(store["ports"] == ["1", "2"])
        #expect(ports.wrappedValue == [1, 2])
        let limits = Setting("limits", default: [String: Int](), store: store, transformer: .dictionary(of: .string))
        limits.wrappedValue = ["z": 1, "a": 2]
        #expect(store["limits"] == ["a": "2", "z": "1"])
        let asCodable = Setting("codableTheme", default: TxCodableTheme.dark, store: store, transformer: .codable)
        asCodable.wrappedValue = .light
        #expect(store["codableTheme"] == "light")
        let transformer = SettingsTransformer<Int8>.integer
        #expect(try transformer.encode(-3) == -3)
        #expect(throws: SettingsError.self) { try transformer.decode(.real(1e10)) }
    }

    // MARK: SettingsColor

    @Test(arguments: [
        ("#F80", "#FF8800"), ("f80", "#FF8800"), ("#F808", "#FF880088"), ("#ff8800", "#FF8800"),
        ("FF880080", "#FF880080"), ("#000000FF", "#000000"), ("#0000", "#00000000"), ("abcdef", "#ABCDEF"),
    ])
    func colorsParseEveryHexForm(_ text: String, _ hex: String) throws {
        let color = try #require(SettingsColor(hex: text))
        #expect(color.hex == hex)
        #expect(SettingsColor(hex: color.hex) == color)
    }

    @Test(arguments: ["", "#", "#12", "#12345", "#1234567", "#123456789", "##123", "#GG0000", " #FF8800", "#FF8800 ", "１２３", "#+12"])
    func malformedHexIsRejected(_ text: String) {
        #expect(SettingsColor(hex: text) == nil)
    }

    @Test func colorComponentsClampAndQuantiseForStorage() {
        #expect(SettingsColor(red: 2, green: -1, blue: .nan).hex == "#FF0000")
        #expect(SettingsColor(red: 0.2, green: 0.4, blue: 1, alpha: 0.5).hex == "#3366FF80")
        let orange = SettingsColor(hex: "#FF8800")
        #expect(orange?.green == 136.0 / 255)
        #expect(orange?.description == "#FF8800")
    }

    @Test func colorsReadFromAComponentDictionaryToo() {
        let store = SettingsStore.inMemory([
            "rgb": ["red": 1, "green": 0.5, "blue": 0],
            "rgba": ["red": 0, "green": 0, "blue": 1, "alpha": 0.0],
            "outOfRange": ["red": 255, "green": 0, "blue": 0],
        ])
        #expect(Setting("rgb", default: SettingsColor.black, store: store).wrappedValue.hex == "#FF8000")
        #expect(Setting("rgba", default: SettingsColor.black, store: store).wrappedValue.hex == "#0000FF00")
        #expect(Setting("outOfRange", default: SettingsColor.black, store: store).wrappedValue == .black)
    }

    @Test func colorsAreCodableAsTheirHexText() throws {
        struct Theme: Codable, Equatable { var accent: SettingsColor }
        let value = try PlistEncoder().encodeToValue(Theme(accent: SettingsColor(hex: "#11223344") ?? .black))
        #expect(value == ["accent": "#11223344"])
        let fromDict = try PlistDecoder().decode(Theme.self, from: ["accent": ["red": 1, "green": 1, "blue": 1]])
        #expect(fromDict.accent == .white)
        #expect(throws: PlistError.self) { try PlistDecoder().decode(Theme.self, from: ["accent": "#XYZ"]) }
        #expect(throws: PlistError.self) { try PlistDecoder().decode(Theme.self, from: ["accent": ["red": 2, "green": 0, "blue": 0]]) }
    }
}
