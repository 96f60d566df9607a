#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles
import Synchronization

/// The program's `layers.plist` beside a domain's file, and what `read` learns from it.
enum LayersManifest {
    /// The manifest beside `domain`'s file, or `nil` when there is none. One that cannot be read
    /// is an error naming it.
    static func read(for domain: Domain) throws(CLIError) -> PlistLayersManifest? {
        do {
            let target = try PlistFile.target(of: domain.path).path
            return try PlistLayersManifest.read(beside: target)
        } catch {
            throw .failure("\(PlistFile.companionDirectory(for: domain.path))/\(PlistLayersManifest.fileName): \(error)")
        }
    }

    /// For `read DOMAIN KEY` when KEY has no value: the value under the key's new name (KEY is
    /// an old one) or under an old name (the program has not moved it yet), with a note saying so.
    static func renamedValue(of key: KeyPath, in contents: PlistDictionary, domain: Domain) -> (value: PlistValue, key: KeyPath, note: String)? {
        guard let manifest = try? read(for: domain) else { return nil }
        if let current = manifest.currentName(of: key.path), let currentKey = try? KeyPath(current),
           let value = contents.value(at: currentKey) {
            return (value, currentKey, "'\(key.path)' was renamed to '\(current)'; this is the value of '\(current)'")
        }
        for old in manifest.formerNames(of: key.path) {
            if let oldKey = try? KeyPath(old), let value = contents.value(at: oldKey) {
                return (value, oldKey, "'\(key.path)' is still stored under its old name '\(old)' (the program moves it at its next save)")
            }
        }
        return nil
    }
}
