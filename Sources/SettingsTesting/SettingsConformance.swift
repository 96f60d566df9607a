#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Settings
import SettingsPlist
import SettingsFiles

/// Checks that a type of yours keeps what the library promises about stored values: a value,
/// transformer or model round trips through XML and binary files, a model keeps keys it does
/// not know, and a settings container exports a schema its own defaults satisfy.
///
/// ```swift
/// @Test func themesAreStoredFaithfully() throws {
///     try SettingsConformance.checkRoundTrip(of: [Theme.light, .dark])
/// }
/// ```
///
/// Each check throws one ``SettingsConformanceFailure`` listing every problem it found.
public enum SettingsConformance {
    /// Checks that each value is stored by its type's transformer and read back equal, through
    /// an XML file and a binary one, and that storing it twice gives the same property list.
    ///
    /// - Parameter values: values of the type, as many kinds as it has.
    /// - Throws: ``SettingsConformanceFailure`` naming every value that did not come back.
    public static func checkRoundTrip<Value: SettingsValue & Equatable>(of values: [Value]) throws(SettingsConformanceFailure) {
        try checkRoundTrip(of: values, through: Value.settingsTransformer)
    }

    /// Checks that each value is stored by `transformer` and read back equal, through an XML
    /// file and a binary one, and that storing it twice gives the same property list.
    ///
    /// - Parameters:
    ///   - values: values of the type.
    ///   - transformer: the transformer checked (a registered or per-setting one).
    /// - Throws: ``SettingsConformanceFailure`` naming every value that did not come back.
    public static func checkRoundTrip<Value: Equatable>(of values: [Value], through transformer: SettingsTransformer<Value>) throws(SettingsConformanceFailure) {
        var problems: [String] = []
        for value in values {
            let stored: PlistValue
            do {
                stored = try transformer.encode(value)
                guard try transformer.encode(value) == stored else {
                    problems.append("\(value): stored twice, it gave two different property lists")
                    continue
                }
            } catch {
                problems.append("\(value): cannot be stored: \(error)")
                continue
            }
            for format in [PlistFormat.xml, .binary] {
                do {
                    let bytes = try PlistValue.dictionary(["value": stored]).encoded(as: format)
                    guard case .dictionary(let read) = try PlistValue(decoding: bytes), let back = read["value"] else {
                        problems.append("\(value): the \(format) file does not hold it")
                        continue
                    }
                    let decoded = try transformer.decode(back)
                    if decoded != value { problems.append("\(value): read back from \(format) as \(decoded)") }
                } catch {
                    problems.append("\(value): \(format) round trip failed: \(error)")
                }
            }
        }
        if !problems.isEmpty { throw SettingsConformanceFailure(subject: transformer.typeName, problems: problems) }
    }

    /// Checks a model type: each model is archived and read back equal through XML and binary
    /// with no field issue, `Model()` archives, and a model file keeps a key the type does not
    /// know (at the top and inside a nested dictionary) when it is loaded and saved again.
    ///
    /// - Parameter models: models of the type, as different as you can make them.
    /// - Throws: ``SettingsConformanceFailure`` naming every problem.
    public static func checkModel<Model: SettingsModel & Equatable>(_ models: [Model]) throws(SettingsConformanceFailure) {
        var problems: [String] = []
        let subject = String(describing: Model.self)
        do {
            _ = try Model().archive()
        } catch {
            problems.append("\(subject)(): cannot be archived: \(error)")
        }
        for model in models {
            for format in [PlistFormat.xml, .binary] {
                do {
                    let bytes = try PlistValue.dictionary(model.archive()).encoded(as: format)
                    guard case .dictionary(let read) = try PlistValue(decoding: bytes) else {
                        problems.append("\(model): the \(format) file is not a dictionary")
                        continue
                    }
                    var issues: [ModelFieldIssue] = []
                    let back = Model.unarchive(read, issues: &issues)
                    if !issues.isEmpty { problems.append("\(model): read back from \(format) with field issues: \(issues)") }
                    if back != model { problems.append("\(model): read back from \(format) as \(back)") }
                } catch {
                    problems.append("\(model): \(format) round trip failed: \(error)")
                }
            }
        }
        if let model = models.first { problems += unknownKeysKept(by: model) }
        if !problems.isEmpty { throw SettingsConformanceFailure(subject: subject, problems: problems) }
    }

    /// Saves `model` to a file, adds keys the type does not know, loads and saves it again, and
    /// says what was lost.
    private static func unknownKeysKept<Model: SettingsModel & Equatable>(by model: Model) -> [String] {
        let directory = FileManager.default.temporaryDirectory.appending(path: "settings-conformance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "model.plist")
        let unknown = "conformanceKeyUnknownToTheModel"
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try model.save(to: file)
            guard case .dictionary(var saved) = try PlistValue(contentsOf: file) else { return ["the model file is not a dictionary"] }
            saved[unknown] = "kept"
            var nestedKey: String?
            for (key, value) in saved {
                guard case .dictionary(var nested) = value else { continue }
                nested[unknown] = "kept"
                saved[key] = .dictionary(nested)
                nestedKey = key
                break
            }
            try PlistValue.dictionary(saved).write(to: file)
            let loaded = try Model.load(from: file)
            try loaded.save(to: file)
            guard case .dictionary(let after) = try PlistValue(contentsOf: file) else { return ["the model file is not a dictionary after a save"] }
            var problems: [String] = []
            if after[unknown] != "kept" { problems.append("a key the model does not know ('\(unknown)') was dropped by a load and a save") }
            if let nestedKey, case .dictionary(let nested)? = after[nestedKey], nested[unknown] != "kept" {
                problems.append("a key the model does not know inside '\(nestedKey)' was dropped by a load and a save")
            }
            return problems
        } catch {
            return ["saving and loading a model file failed: \(error)"]
        }
    }

    /// Checks a settings container (a type with `@Setting` and `@StoredModel` properties): its
    /// schema (``SettingsSchema``) is exported, is a schema the library's checker accepts, and
    /// every default it declares satisfies it.
    ///
    /// - Parameter settings: an instance of the container.
    /// - Throws: ``SettingsConformanceFailure`` naming every problem.
    public static func checkSchema(of settings: Any) throws(SettingsConformanceFailure) {
        let schema = SettingsSchema(of: settings)
        let subject = schema.title
        let checker: PlistSchema
        do {
            checker = try schema.checker()
        } catch {
            throw SettingsConformanceFailure(subject: subject, problems: ["its schema is not one the checker accepts: \(error)"])
        }
        var defaults = PlistDictionary()
        for key in schema.keys {
            guard let value = key.defaultValue else { continue }
            defaults.setValue(value, at: key.key.components[...])  // the store's own key-path rule
        }
        let problems = checker.violations(of: .dictionary(defaults)).map { "a default breaks the schema: \($0)" }
        if !problems.isEmpty { throw SettingsConformanceFailure(subject: subject, problems: problems) }
    }
}
