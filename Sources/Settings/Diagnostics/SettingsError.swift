public import SettingsPlist

/// The one error type of the `Settings` module: what failed, for which key and file, and why.
///
/// ```swift
/// do {
///     let port: Int = try store.requiredValue(for: "Server/port")
/// } catch let error as SettingsError where error.code == .missingKey {
///     print(error)   // no value for key 'Server/port' (namespace 'Server' has no key 'port')
/// }
/// ```
public struct SettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Hashable, Sendable {
        /// A file that was asked for does not exist.
        case missingFile
        /// A key has no value in any layer and no default was given.
        case missingKey
        /// A stored value has a type the caller cannot use.
        case typeMismatch
        /// A file exists but could not be read or parsed, or could not be written.
        case invalidFile
        /// A command-line argument or environment variable could not be parsed.
        case invalidOverride
        /// Another process held the settings file's lock for longer than the store's lock timeout.
        case fileLocked
        /// A value that no reader could read back was refused before anything changed: its key
        /// and value together nest deeper than readers accept (512 levels), or it is larger than
        /// the settings file may be.
        case unstorable
        /// An administrator locked the key (``path`` is the `locked.plist` that does): the
        /// write was refused and nothing changed (see ``SettingsStore/isWritable(_:)``).
        case locked
    }

    /// What kind of failure.
    public var code: Code
    /// The key concerned, if any.
    public var key: SettingsKey?
    /// The file concerned, if any.
    public var path: String?
    /// The type that was wanted (for ``Code/typeMismatch``).
    public var expectedType: String?
    /// The type that was found (for ``Code/typeMismatch``), named as a Swift type like
    /// ``expectedType`` (`String`, not the plist's `string`).
    public var foundType: String?
    /// The layer the offending value came from, if any.
    public var source: SettingsLayer?
    /// The underlying plist error, for ``Code/invalidFile``.
    public var underlying: PlistError?
    /// Extra detail in words.
    public var detail: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - key: the key, if any.
    ///   - path: the file, if any.
    ///   - expectedType: the wanted type's name.
    ///   - foundType: the found type's name; a plist type name (`string`, `integer`, `dict`…)
    ///     becomes the Swift type a plain read gives (`String`, `Int`, `Dictionary`…).
    ///   - source: the layer of the offending value.
    ///   - underlying: a plist parse or write error.
    ///   - detail: more words.
    public init(
        _ code: Code, key: SettingsKey? = nil, path: String? = nil, expectedType: String? = nil,
        foundType: String? = nil, source: SettingsLayer? = nil, underlying: PlistError? = nil, detail: String? = nil
    ) {
        self.code = code
        self.key = key
        self.path = path
        self.expectedType = expectedType
        self.foundType = foundType.map(swiftTypeName(forPlistType:))
        self.source = source
        self.underlying = underlying
        self.detail = detail
    }

    /// One line naming the key, file, types and layer involved.
    public var description: String {
        let keyText = key.map { "key '\($0.abbreviatedPath)'" }
        var text: String
        switch code {
        case .missingFile:
            text = "file not found: \(path ?? "?")"
        case .missingKey:
            text = "no value for \(keyText ?? "key")"
        case .typeMismatch:
            text = "\(keyText ?? "value") has type \(foundType ?? "?"), expected \(expectedType ?? "?")"
            if let source { text += " (from \(source.name))" }
        case .invalidFile:
            if let underlying {
                text = underlying.inFile(path ?? underlying.path ?? "?").description
            } else if let path, let detail {
                return "\(path): \(detail)"  // compiler style, like a parse error's `FILE:LINE:COL: message`
            } else {
                text = "invalid file \(path ?? "?")"
            }
        case .invalidOverride:
            text = "invalid override for \(keyText ?? "key")"
        case .fileLocked:
            if let path, let detail { return "\(path): \(detail)" }
            text = "settings file \(path ?? "?") is locked by another process"
        case .locked:
            text = "\(keyText ?? "the key") is locked by \(path ?? "the administrator"); nothing was changed"
        case .unstorable:
            if key == nil, let path, let detail { return "\(path): \(detail)" }
            text = "cannot store \(keyText ?? "the value")"
        }
        if let detail {
            // A secret key's value may be quoted in the detail ("abc" is not a URL): leave it out.
            let hidden = (code == .typeMismatch || code == .invalidOverride) && key?.isSecret == true
            text += hidden ? " (details not shown: the key is secret)" : " (\(detail))"
        }
        return text
    }
}

/// The Swift type a plain read of a plist type gives, so that a type mismatch names both types
/// the same way (`has type String, expected Bool`); any other name is kept.
func swiftTypeName(forPlistType name: String) -> String {
    switch name {
    case "string": "String"
    case "integer": "Int"
    case "real": "Double"
    case "bool": "Bool"
    case "date": "Date"
    case "data": "Data"
    case "array": "Array"
    case "dict": "Dictionary"
    case "uid": "UID"
    default: name
    }
}
