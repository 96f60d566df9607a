#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Settings
import SettingsPlist

/// A `DOMAIN` argument: an application name, resolved as the library resolves its shared store
/// (`$XDG_CONFIG_HOME/<name>/settings.plist`, `~/.config` when unset), or a path to a plist file
/// (any argument that contains a `/` or ends in `.plist`).
struct Domain {
    let argument: String
    let url: URL

    init(_ argument: String) throws(CLIError) {
        guard !argument.isEmpty else { throw .usage("DOMAIN must not be empty") }
        self.argument = argument
        if argument.contains("/") || argument.hasSuffix(".plist") {
            url = URL(filePath: argument)
        } else {
            url = SettingsStore.defaultFileURL(application: argument)
        }
    }

    var path: String { url.path }

    /// The domain's contents: an empty dictionary when the file does not exist yet.
    func contents() throws(CLIError) -> PlistDictionary {
        guard FileManager.default.fileExists(atPath: path) else { return PlistDictionary() }
        let value = try readValue(path)
        guard case .dictionary(let dictionary) = value else {
            throw .failure("\(path): the root is a \(value.typeName), expected a dict")
        }
        return dictionary
    }

    /// Changes the domain through the library: an advisory lock, a merge of the keys changed here
    /// onto the file's current contents, and a durable atomic write. Two `settings write`s at
    /// once lose nothing.
    func change(_ body: (SettingsStore) throws(CLIError) -> Void) throws(CLIError) {
        SettingsDiagnostics.handler = { diagnostic in Console.error(diagnostic.message) }
        let store = SettingsStore.file(url, autosaveDelay: nil, externalChanges: .ignored)
        if let problem = store.loadError {
            throw .failure(problem.description)
        }
        try body(store)
        do {
            try store.flushNow()
        } catch {
            throw .failure(error.description)
        }
    }
}

/// A `KEY` argument: `Root/Sub/Key` namespaces, `\/` for a literal slash.
func parseKey(_ text: String) throws(CLIError) -> SettingsKey {
    guard !text.isEmpty else { throw .usage("KEY must not be empty") }
    return SettingsKey(text)
}

extension PlistDictionary {
    /// The value at a key path.
    func value(at key: SettingsKey) -> PlistValue? {
        var current: PlistValue = .dictionary(self)
        for component in key.components {
            guard case .dictionary(let dict) = current, let next = dict[component] else { return nil }
            current = next
        }
        return current
    }

    /// Every leaf key path, depth first, in file order (an empty dictionary is a leaf).
    func leafPaths(prefix: [String] = []) -> [(SettingsKey, PlistValue)] {
        var out: [(SettingsKey, PlistValue)] = []
        for (key, value) in self {
            let path = prefix + [key]
            if case .dictionary(let child) = value, !child.isEmpty {
                out += child.leafPaths(prefix: path)
            } else {
                out.append((SettingsKey(components: path), value))
            }
        }
        return out
    }
}
