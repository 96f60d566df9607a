public import Configuration
public import Settings
import SettingsPlist

extension ConfigReader {
    /// Decodes a model from whatever providers hold its fields, with the recovery the store's own
    /// models have: a field no provider holds keeps its default, and a field that does not decode
    /// keeps its default and is reported in `issues` (`field 'age': expected an integer, found a
    /// string`), the other fields decoding normally.
    ///
    /// The model's fields are found from its default value (`Profile()` archived): each field is
    /// read at `key` plus its path, `profile.name`, `profile.window.width`, of the type the
    /// default has. So a field shows in configuration only when its default is not `nil` and, for
    /// a dictionary, not empty.
    ///
    /// ```swift
    /// struct Profile: SettingsModel, Codable { var name = "Guest"; var age = 0 }
    /// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), SettingsProvider(store: .shared)])
    /// var issues: [ModelFieldIssue] = []
    /// let profile = config.decode(Profile.self, at: "profile", issues: &issues)   // PROFILE_NAME=Ada
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: the key its fields are under.
    ///   - issues: receives a ``ModelFieldIssue`` per field that did not decode.
    /// - Returns: the model.
    public func decode<Model: SettingsModel & Codable>(_ type: Model.Type, at key: ConfigKey, issues: inout [ModelFieldIssue]) -> Model {
        let template = (try? Model().archive()) ?? PlistDictionary()
        var found = PlistDictionary()
        // Iterative walk of the template's leaves: no recursion on the model's depth.
        var pending: [(path: [String], value: PlistValue)] = template.map { ([$0.key], $0.value) }
        while let (path, value) = pending.popLast() {
            if case .dictionary(let inner) = value {
                pending += inner.map { (path + [$0.key], $0.value) }
                continue
            }
            let configKey = ConfigKey(key.components + path)
            if let read = read(configKey, like: value) { found.set(read, at: path) }
        }
        return Model.unarchive(found, issues: &issues)
    }

    /// ``decode(_:at:issues:)``, each field that did not decode reported to
    /// ``SettingsDiagnostics/handler`` as a ``SettingsDiagnostic/Kind/typeMismatch``.
    ///
    /// ```swift
    /// let profile = config.decode(Profile.self, at: "profile")
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: the key its fields are under.
    /// - Returns: the model.
    public func decode<Model: SettingsModel & Codable>(_ type: Model.Type, at key: ConfigKey) -> Model {
        var issues: [ModelFieldIssue] = []
        let model = decode(type, at: key, issues: &issues)
        for issue in issues {
            SettingsDiagnostics.handler(SettingsDiagnostic(
                .typeMismatch, "configuration '\(key)': \(issue); using the default"))
        }
        return model
    }

    /// The value at `key` of the type `like` has; a string when the providers hold one of
    /// another type (so that decoding reports the mismatch); `nil` when none holds it.
    private func read(_ key: ConfigKey, like value: PlistValue) -> PlistValue? {
        let typed: ConfigContent? = switch ConfigType(like: value) {
        case .string?: string(forKey: key).map(ConfigContent.string)
        case .int?: int(forKey: key).map(ConfigContent.int)
        case .double?: double(forKey: key).map(ConfigContent.double)
        case .bool?: bool(forKey: key).map(ConfigContent.bool)
        case .bytes?: bytes(forKey: key).map(ConfigContent.bytes)
        case .stringArray?: stringArray(forKey: key).map(ConfigContent.stringArray)
        case .intArray?: intArray(forKey: key).map(ConfigContent.intArray)
        case .doubleArray?: doubleArray(forKey: key).map(ConfigContent.doubleArray)
        case .boolArray?: boolArray(forKey: key).map(ConfigContent.boolArray)
        case .byteChunkArray?: byteChunkArray(forKey: key).map(ConfigContent.byteChunkArray)
        case nil: nil
        }
        return typed?.plistValue ?? string(forKey: key).map(PlistValue.string)
    }
}

extension PlistDictionary {
    /// Sets the value at a key path, creating the dictionaries on the way (without recursion).
    mutating func set(_ value: PlistValue, at path: [String]) {
        guard let last = path.last else { return }
        var chain: [PlistDictionary] = [self]
        for component in path.dropLast() {
            guard case .dictionary(let inner)? = chain[chain.count - 1][component] else {
                chain.append(PlistDictionary())
                continue
            }
            chain.append(inner)
        }
        chain[chain.count - 1][last] = value
        for index in stride(from: chain.count - 1, to: 0, by: -1) {
            chain[index - 1][path[index - 1]] = .dictionary(chain[index])
        }
        self = chain[0]
    }
}
