#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SettingsPlist
public import SettingsFiles

/// The schema of a settings type, found by reflection: every key with its type, default, range,
/// allowed values, secret flag and former names, exported as JSON Schema (draft 2020-12).
///
/// Build it from a value of your settings type (the `@Setting`s and `@StoredModel`s in it and
/// in its nested ``SettingsGroup``s, as ``SettingsStore/registerDefaults(_:checking:)`` finds
/// them), then write it beside the store's file with one call, at first run or in a build step.
/// The `settings` tool, which cannot see your types, reads it from there: `settings schema APP`
/// prints it, `settings write` refuses a value that does not fit it, and `settings lint --schema`
/// checks any file against it.
///
/// ```swift
/// struct AppSettings {
///     @Setting("Network/timeout", default: 30.0, rules: .clamp(1...120)) var timeout: Double
///     @Setting("theme", default: Theme.light) var theme: Theme      // enum Theme: String, CaseIterable
/// }
/// let schema = SettingsSchema(of: AppSettings())
/// try schema.write(for: .shared)   // ~/.config/App/.settings.plist.meta/schema.json
/// ```
///
/// How values map to JSON (what the schema describes, as `PlistValue.jsonInstanceText()`
/// renders a settings file): `Int` and the other integers are `integer`, `Double` and `Float`
/// `number`, `Bool` `boolean`, strings (and URLs, UUIDs, colors, raw values of string enums)
/// `string`, `Date` a `string` with `"format": "date-time"` (ISO 8601), `Data` a `string` with
/// `"contentEncoding": "base64"`, arrays `array`, dictionaries and models `object`.
/// Namespaces (`Network/timeout`) are nested `properties` objects. Other keys are allowed
/// (`additionalProperties` is not restricted): a file keeps keys of other versions of the
/// program and of other tools. A setting's type is known from its default, an enum's cases or
/// its built-in transformer; an optional setting with a transformer of its own and no default
/// gets no `type`. Secret keys are marked `"x-secret": true` and their defaults are left out;
/// former names are listed in `"x-formerly"`; `"x-swift-type"` names the Swift type.
///
/// What an editor or a documentation generator needs besides: `title` (the setting's `title:`
/// or its `Settings.bundle` `Title`), `description` (its `help:`, else the property's name, then
/// kept in `"x-property"`), `"x-order"` (declaration order), `"x-group"` (the bundle group's
/// title, else the namespace), `"x-enum-titles"` (a title per `enum` value, from the bundle's
/// `Titles`), and for a key an administrator locked, `"readOnly": true` with the locks file
/// in `"x-locked-by"`.
public struct SettingsSchema: Sendable, Equatable {
    /// One key of the schema.
    public struct Key: Sendable, Equatable {
        /// The key.
        public var key: SettingsKey
        /// Where it is declared: `AppSettings.network.timeout`.
        public var property: String
        /// The Swift type (`Double`, `Theme`).
        public var typeName: String
        /// The JSON type (`integer`, `number`, `string`, `boolean`, `array`, `object`), or
        /// `nil` when it cannot be told.
        public var jsonType: String?
        /// `date-time` for a `Date`.
        public var format: String?
        /// `base64` for `Data`.
        public var contentEncoding: String?
        /// The value it reads as when no layer has it, stored form; `nil` for none (or a secret).
        public var defaultValue: PlistValue?
        /// The lowest value its `clamp` rules let through, stored form.
        public var minimum: PlistValue?
        /// The highest value its `clamp` rules let through, stored form.
        public var maximum: PlistValue?
        /// The values it can take (a `CaseIterable` enum's raw values), or `nil` for any.
        public var allowedValues: [PlistValue]?
        /// Whether the key holds a secret (``SettingsKey/isSecret``).
        public var isSecret: Bool
        /// The names the key had before (`formerly:`), newest first.
        public var formerNames: [String]
        /// A short human title: the setting's `title:`, else its `Title` in a registered
        /// `Settings.bundle` pane (the schema's `title`).
        public var title: String? = nil
        /// What the setting does: its `help:` (the schema's `description`; the property's
        /// name when there is none).
        public var help: String? = nil
        /// The group it is shown in: the bundle pane's group title, else its namespace
        /// (`Network` for `Network/timeout`); `nil` at the top level (`x-group`).
        public var group: String? = nil
        /// Its place among the keys: declaration order (`x-order`).
        public var order: Int = 0
        /// A title for each of ``allowedValues``, from a bundle pane's `Titles` (`x-enum-titles`).
        public var allowedValueTitles: [String]? = nil
        /// The `locked.plist` that locks the key in the store the schema was made from: the
        /// schema marks it `readOnly` with the file as `x-locked-by`.
        public var lockedBy: String? = nil
    }

    /// The JSON Schema dialect written in `$schema`.
    public static let dialect = "https://json-schema.org/draft/2020-12/schema"

    /// The schema's title: the settings type's name.
    public var title: String
    /// Every key, in declaration order.
    public var keys: [Key]

    /// The schema of a settings value, by reflection.
    ///
    /// Key-less settings are bound to their derived keys first (as ``SettingsStore/bind(_:to:)``
    /// does, keeping their stores).
    ///
    /// ```swift
    /// let schema = SettingsSchema(of: AppSettings())
    /// schema.keys.map(\.key.path)   // ["Network/timeout", "theme"]
    /// ```
    ///
    /// - Parameters:
    ///   - settings: a value of your settings type.
    ///   - title: the schema's title; the type's name by default.
    public init(of settings: Any, title: String? = nil) {
        SettingsStore.bind(settings)
        let typeName = String(describing: type(of: settings))
        self.title = title ?? typeName
        keys = SettingsStore.settingPaths(in: settings).compactMap { path, box in
            guard let key = box.key else { return nil }
            let facts = box.facts
            let kind = Self.jsonKind(facts)
            let bundle = box.store.values.storage.locked { $0.sources.bundleTexts[key] }
            var entry = Key(
                key: key, property: ([typeName] + path).joined(separator: "."), typeName: facts.typeName,
                jsonType: kind.type, format: kind.format, contentEncoding: kind.encoding,
                defaultValue: key.isSecret ? nil : facts.defaultValue,
                minimum: facts.minimum, maximum: facts.maximum, allowedValues: facts.allowedValues,
                isSecret: key.isSecret,
                formerNames: box.formerly.map(\.path)
            )
            entry.title = facts.title ?? bundle?.title
            entry.help = facts.help
            entry.group = bundle?.group ?? key.parent?.path
            if let bundle, let allowed = entry.allowedValues ?? (bundle.valueTitles.isEmpty ? nil : bundle.valueTitles.map(\.value)) {
                let titles = allowed.map { value in bundle.valueTitles.first { $0.value == value }?.title }
                if titles.allSatisfy({ $0 != nil }) {
                    entry.allowedValues = allowed
                    entry.allowedValueTitles = titles.compactMap { $0 }
                }
            }
            entry.lockedBy = box.store.lockingFile(of: key)
            return entry
        }
        for index in keys.indices { keys[index].order = index }
    }

    /// The JSON type, format and encoding of a setting: from its default, a sample (an enum's
    /// first case) or its Swift type.
    private static func jsonKind(_ facts: SettingFacts) -> (type: String?, format: String?, encoding: String?) {
        let kind: String? = switch facts.defaultValue ?? facts.sample {
        case .string?: "string"
        case .integer?: "integer"
        case .real?: "number"
        case .bool?: "boolean"
        case .date?: "date"
        case .data?: "data"
        case .array?: "array"
        case .dictionary?: "object"
        case .uid?, nil: facts.declaredJSONType
        }
        return switch kind {
        case "date": ("string", "date-time", nil)
        case "data": ("string", nil, "base64")
        default: (kind, nil, nil)
        }
    }

    /// The JSON Schema document, as a property-list tree (objects as dictionaries).
    ///
    /// ```swift
    /// let document = SettingsSchema(of: AppSettings()).jsonSchema
    /// document["properties"]?["Network"]?["properties"]?["timeout"]?["maximum"]   // 120.0
    /// ```
    public var jsonSchema: PlistValue {
        // Namespaces are built bottom-up from the keys' prefixes, without recursion.
        var groups: [[String]: PlistDictionary] = [[]: PlistDictionary()]
        var order: [[String]] = [[]]
        for key in keys {
            let components = key.key.components
            for depth in 0..<(components.count - 1) {
                let prefix = Array(components[..<(depth + 1)])
                guard groups[prefix] == nil else { continue }
                groups[prefix] = PlistDictionary()
                order.append(prefix)
                _ = groups[Array(prefix.dropLast()), default: PlistDictionary()].replaceValue(.bool(true), forKey: prefix[prefix.count - 1])
            }
            _ = groups[Array(components.dropLast()), default: PlistDictionary()]
                .replaceValue(.dictionary(Self.schema(of: key)), forKey: components[components.count - 1])
        }
        for prefix in order.reversed() where !prefix.isEmpty {
            let object: PlistDictionary = ["type": "object", "properties": .dictionary(groups[prefix] ?? PlistDictionary())]
            _ = groups[Array(prefix.dropLast()), default: PlistDictionary()].replaceValue(.dictionary(object), forKey: prefix[prefix.count - 1])
        }
        return [
            "$schema": .string(Self.dialect),
            "title": .string(title),
            "type": "object",
            "properties": .dictionary(groups[[]] ?? PlistDictionary()),
        ]
    }

    /// One key's schema.
    private static func schema(of key: Key) -> PlistDictionary {
        var schema = PlistDictionary()
        if let type = key.jsonType { schema["type"] = .string(type) }
        if let format = key.format { schema["format"] = .string(format) }
        if let encoding = key.contentEncoding { schema["contentEncoding"] = .string(encoding) }
        // A default JSON cannot carry (a real that is not finite) is left out.
        if let value = key.defaultValue, (try? value.jsonInstanceText()) != nil { schema["default"] = value }
        if let minimum = key.minimum, minimum.doubleValue != nil { schema["minimum"] = minimum }
        if let maximum = key.maximum, maximum.doubleValue != nil { schema["maximum"] = maximum }
        if let allowed = key.allowedValues { schema["enum"] = .array(allowed) }
        if let titles = key.allowedValueTitles { schema["x-enum-titles"] = .array(titles.map(PlistValue.string)) }
        if let title = key.title { schema["title"] = .string(title) }
        schema["description"] = .string(key.help ?? key.property)
        if key.help != nil { schema["x-property"] = .string(key.property) }
        schema["x-order"] = .integer(PlistInteger(Int64(key.order)))
        if let group = key.group { schema["x-group"] = .string(group) }
        if let file = key.lockedBy {
            schema["readOnly"] = true
            schema["x-locked-by"] = .string(file)
        }
        schema["x-swift-type"] = .string(key.typeName)
        if key.isSecret { schema["x-secret"] = true }
        if !key.formerNames.isEmpty { schema["x-formerly"] = .array(key.formerNames.map(PlistValue.string)) }
        return schema
    }

    /// The JSON Schema document as JSON text, two-space indented (dates in defaults as ISO
    /// 8601 strings, data as base64).
    ///
    /// - Returns: the JSON text, ending in a newline.
    /// - Throws: ``SettingsError/Code/unstorable`` when a value in it has no JSON form (a UID).
    public func jsonText() throws(SettingsError) -> String {
        do {
            return try jsonSchema.jsonInstanceText() + "\n"
        } catch {
            throw SettingsError(.unstorable, detail: "the schema has no JSON form: \(error)")
        }
    }

    /// The schema checker for this schema (`PlistSchema`), as the `settings` tool uses it.
    ///
    /// ```swift
    /// let problems = try SettingsSchema(of: AppSettings()).checker().violations(of: .dictionary(contents))
    /// ```
    ///
    /// - Returns: the checker.
    /// - Throws: `PlistSchema.Invalid` if the document uses a keyword it does not implement
    ///   (it never does: the schema uses only what the checker knows).
    public func checker() throws(PlistSchema.Invalid) -> PlistSchema {
        try PlistSchema(jsonSchema)
    }

    /// Writes the schema into the companion directory of `store`'s file
    /// (`PlistFile.companionDirectory(for:)`, `.settings.plist.meta/schema.json` beside it),
    /// atomically and owner-only, where the `settings` tool finds it.
    ///
    /// ```swift
    /// try SettingsSchema(of: AppSettings()).write(for: .shared)
    /// ```
    ///
    /// Nothing is written when the file already holds this exact schema. The settings file's
    /// directory is created (owner-only) when it is missing, as a save would.
    ///
    /// - Parameter store: a store with a file.
    /// - Returns: the path of the schema file.
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/invalidFile`` for an in-memory
    ///   store, a settings file the link rule refuses, or a companion directory that cannot be
    ///   made or written (a link, another user's, one open to others).
    @discardableResult
    public func write(for store: SettingsStore) throws(SettingsError) -> String {
        guard let url = store.url else {
            throw SettingsError(.invalidFile, detail: "an in-memory store has no file to write a schema beside")
        }
        let bytes = Array(try jsonText().utf8)
        let target: String
        do {
            target = try PlistFile.target(of: url.path).path
        } catch {
            throw SettingsError(.invalidFile, path: url.path, detail: "cannot write its schema: \(error)")
        }
        // At first run the settings file and its directory may not exist yet.
        try SettingsFile.createDirectory(of: target)
        do {
            let directory = try PlistFile.makeCompanionDirectory(for: target)
            let path = directory + "/" + PlistSchema.fileName
            if try PlistFile.read(path, limit: PlistSchema.maximumFileSize, followingLinks: false)?.bytes == bytes { return path }
            _ = try PlistFile.replace(path, with: bytes, permissions: 0o600)
            return path
        } catch {
            throw SettingsError(.invalidFile, path: target, detail: "cannot write its schema: \(error)")
        }
    }
}
