public import SettingsPlist

/// Numbered steps that bring stored data up to the current schema: rename a key, convert a value,
/// or rewrite the dictionary. They run on load, for model files, `@StoredModel`s and stores.
///
/// The version a dictionary was written at is kept under ``versionKey`` (`"$version"`) at its top
/// level; a dictionary without it is version 0. Steps numbered above the stored version run in
/// order (by version, then in the order they were added), and the current version is written
/// back with the next save.
///
/// ```swift
/// struct Profile: SettingsModel, Codable {
///     var displayName = "Guest"
///     var volume = 0.5
///     static let migrations = SettingsMigrations { m in
///         m.renameKey("name", to: "displayName", inVersion: 2)
///         m.convert("volume", inVersion: 3) { old in old.doubleValue.map { .real($0 / 100) } }   // percent -> 0...1
///     }
/// }
/// ```
public struct SettingsMigrations: Sendable {
    /// The top-level key that holds a dictionary's schema version.
    public static let versionKey = "$version"

    /// One step: the version it brings data to, and what it does.
    struct Step: Sendable {
        var version: Int
        var name: String
        var apply: @Sendable (inout PlistDictionary) throws -> Void
    }

    /// The current schema version: the highest step's (0 with no steps).
    public private(set) var version = 0
    private(set) var steps: [Step] = []

    /// No migrations: version 0.
    public init() {}

    /// Migrations built by `build`.
    ///
    /// - Parameter build: adds the steps.
    public init(_ build: (inout SettingsMigrations) -> Void) {
        build(&self)
    }

    /// Adds a step that rewrites the whole dictionary.
    ///
    /// - Parameters:
    ///   - version: the version the step brings data to.
    ///   - body: changes the dictionary; a thrown error stops the migration and is reported.
    public mutating func step(toVersion version: Int, _ body: @escaping @Sendable (inout PlistDictionary) throws -> Void) {
        add(Step(version: version, name: "step to version \(version)", apply: body))
    }

    /// Adds a step that moves the value at `old` to `new` (when `old` has one and `new` has none).
    ///
    /// - Parameters:
    ///   - old: the key path it was stored under.
    ///   - new: the key path it is stored under now.
    ///   - version: the version the rename brings data to.
    public mutating func renameKey(_ old: SettingsKey, to new: SettingsKey, inVersion version: Int) {
        add(Step(version: version, name: "rename '\(old.path)' to '\(new.path)'") { dict in
            guard let value = dict.value(at: old.components) else { return }
            _ = dict.setValue(nil, at: old.components[...])
            if dict.value(at: new.components) == nil { _ = dict.setValue(value, at: new.components[...]) }
        })
    }

    /// Adds a step that converts the value at `key` (when it has one).
    ///
    /// - Parameters:
    ///   - key: the key path.
    ///   - version: the version the conversion brings data to.
    ///   - transform: the new value for the old one, or `nil` to remove it.
    public mutating func convert(
        _ key: SettingsKey, inVersion version: Int, _ transform: @escaping @Sendable (PlistValue) throws -> PlistValue?
    ) {
        add(Step(version: version, name: "convert '\(key.path)'") { dict in
            guard let value = dict.value(at: key.components) else { return }
            _ = dict.setValue(try transform(value), at: key.components[...])
        })
    }

    private mutating func add(_ step: Step) {
        steps.append(step)
        steps.sort { $0.version < $1.version }  // stable: same-version steps keep their order
        version = max(version, step.version)
    }

    /// Brings `dictionary` from its stored version to ``version`` and removes the version key.
    ///
    /// - Parameters:
    ///   - dictionary: the stored dictionary.
    ///   - source: what it came from, for the error.
    /// - Returns: the version it was stored at.
    /// - Throws: ``SettingsError`` (`.invalidFile`) naming the step that failed; `dictionary` is
    ///   then unchanged.
    @discardableResult
    func migrate(_ dictionary: inout PlistDictionary, source: String) throws(SettingsError) -> Int {
        let stored = try Self.storedVersion(of: dictionary, source: source)
        var migrated = dictionary
        migrated[Self.versionKey] = nil
        for step in steps where step.version > stored && step.version <= version {
            do {
                try step.apply(&migrated)
            } catch {
                throw SettingsError(.invalidFile, path: source, detail: "migration \(step.name) failed: \(error)")
            }
        }
        dictionary = migrated
        return stored
    }

    /// The version `dictionary` was stored at: 0 without ``versionKey``; an integer too large
    /// for `Int` is newer than any program (`Int.max`).
    ///
    /// - Throws: ``SettingsError`` (`.invalidFile`) when the version is not an integer: running
    ///   migrations over data whose version is unknown could run them twice.
    static func storedVersion(of dictionary: PlistDictionary, source: String) throws(SettingsError) -> Int {
        guard let value = dictionary[versionKey] else { return 0 }
        if let version = value.intValue { return version }
        if value.uint64Value != nil { return Int.max }  // beyond Int.max
        throw SettingsError(.invalidFile, path: source, detail: "'\(versionKey)' is \(value.typeNameWithArticle) (\(value)), expected an integer; not migrated")
    }
}
