public import SettingsPlist

/// A value kept whole: under one key of a store with ``StoredModel``, or in a file of its own with
/// ``save(to:format:)`` and ``load(from:)``. No coding code to write.
///
/// Two kinds of model conform with nothing but `init()`:
/// - `Codable` models: every stored property is archived, except those marked ``Transient``.
/// - Marked-field models (MFDynamicStorage's): only the properties marked ``Archived`` are
///   archived; the others are transient and keep their initial values on load.
///
/// ```swift
/// struct Profile: SettingsModel, Codable {
///     var name = "Guest"
///     var favourites: [String] = []
///     @Transient var lastSearch = ""          // never archived
/// }
/// struct Document: SettingsModel {
///     @Archived var title = "Untitled"         // archived as "title"
///     @Archived("Body") var text = ""           // archived as "Body"
///     var selection = 0                        // transient
/// }
/// ```
///
/// Loading never loses data: a field added since the data was written gets its default; a
/// stored value that no longer decodes falls back alone (the field to its default, an array
/// element or dictionary entry left out), is reported, and keeps its stored value on disk; keys
/// the model does not know are written back untouched at every depth; a newer schema version is
/// never lowered; and ``migrations`` run first. See Docs/ModelFiles.md.
public protocol SettingsModel: Sendable {
    /// A model with every field at its default.
    init()

    /// The schema version and the steps that bring older data up to it (default: none).
    static var migrations: SettingsMigrations { get }

    /// The archived fields, as a dictionary.
    ///
    /// - Throws: ``SettingsError`` (`.typeMismatch`) when a field cannot be stored.
    func archive() throws(SettingsError) -> PlistDictionary

    /// A model from archived fields: fields missing from `dictionary` keep their defaults, and
    /// each field that does not decode keeps its default and is added to `issues`.
    ///
    /// - Parameters:
    ///   - dictionary: the archived fields (already migrated).
    ///   - issues: receives a ``ModelFieldIssue`` per field that did not decode.
    static func unarchive(_ dictionary: PlistDictionary, issues: inout [ModelFieldIssue]) -> Self
}

extension SettingsModel {
    /// No migrations: version 0.
    public static var migrations: SettingsMigrations { SettingsMigrations() }
}

