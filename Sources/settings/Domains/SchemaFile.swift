import SettingsPlist
import SettingsFiles

/// A JSON Schema the tool checks settings files against (``PlistSchema``): one given with
/// `lint --schema`, or the one an application wrote beside its settings file
/// (`SettingsSchema.write(for:)`: `.settings.plist.meta/schema.json`).
struct SchemaFile {
    let schema: PlistSchema
    /// The file as read.
    let bytes: [UInt8]
    /// Where it was read from, for messages.
    let path: String

    /// Reads the schema file at `path`.
    static func read(_ path: String) throws(CLIError) -> SchemaFile {
        try parse(Files.read(path), path: path)
    }

    /// The schema in the companion directory of the settings file `target` (after the link
    /// rule), or `nil` when there is none. A companion directory that is not safe to read, or a
    /// schema that does not parse or uses keywords the checker does not implement, is an error.
    static func beside(_ target: String) throws(CLIError) -> SchemaFile? {
        let directory: String?
        do {
            directory = try PlistFile.existingCompanionDirectory(for: target)
        } catch {
            throw .failure("\(target): cannot use its schema: \(error)")
        }
        guard let directory else { return nil }
        let path = directory + "/" + PlistSchema.fileName
        let contents: PlistFile.Contents?
        do {
            contents = try PlistFile.read(path, limit: PlistSchema.maximumFileSize, followingLinks: false)
        } catch {
            if error.isMissing { return nil }
            throw .failure("\(path): cannot read the schema: \(error)")
        }
        guard let contents else { return nil }
        return try parse(contents.bytes, path: path)
    }

    private static func parse(_ bytes: [UInt8], path: String) throws(CLIError) -> SchemaFile {
        var reader = JSONReader(bytes)
        let value: PlistValue
        do {
            value = try reader.read()
        } catch {
            throw .failure("\(error.inFile(path).description) (the schema is not JSON)")
        }
        do {
            return SchemaFile(schema: try PlistSchema(value), bytes: bytes, path: path)
        } catch {
            throw .failure("\(path): \(error)")
        }
    }

    /// Refuses a change that makes `after` break a rule `before` did not break, naming key,
    /// value and rule. Problems the file already had do not block an unrelated change: a
    /// violation is old when the same key broke the same rule with the same value before (a
    /// secret's value is compared as it is, though never printed), and a missing `required` key
    /// is old when it was missing before, whatever else the dictionary holds.
    ///
    /// Values under a renamed key's old names (`renames`, from the program's `layers.plist`) are
    /// checked as the key they become: the program moves them there at its next save.
    func checkChange(from before: PlistDictionary, to after: PlistDictionary, file: String,
                     renames: [PlistLayersManifest.Rename] = []) throws(CLIError) {
        let before = Self.moved(before, renames), after = Self.moved(after, renames)
        let known = Set(schema.violations(of: .dictionary(before), showingSecrets: true).map(Self.identity))
        let shown = schema.violations(of: .dictionary(after))
        let compared = schema.violations(of: .dictionary(after), showingSecrets: true)
        var new: [PlistSchema.Violation] = []
        for (violation, revealed) in zip(shown, compared) where !known.contains(Self.identity(revealed)) {
            new.append(violation)
        }
        guard let first = new.first else { return }
        let more = new.count > 1 ? " (and \(new.count - 1) more)" : ""
        throw .failure("\(file): \(first)\(more), by the schema \(path); not changed")
    }

    /// What makes two violations the same problem: key path and rule, and the value unless the
    /// rule is a missing `required` key (the dictionary's size says nothing about it).
    private static func identity(_ violation: PlistSchema.Violation) -> PlistSchema.Violation {
        var identity = violation
        if violation.rule.hasPrefix("\"required\"") { identity.value = "" }
        return identity
    }

    /// `contents` as the program sees it after its next save: a value under an old name of a
    /// renamed key moved to the key, when the key has none.
    static func moved(_ contents: PlistDictionary, _ renames: [PlistLayersManifest.Rename]) -> PlistDictionary {
        var contents = contents
        for rename in renames {
            guard let key = try? KeyPath(rename.key), contents.value(at: key) == nil else { continue }
            for old in rename.formerly {
                guard let oldKey = try? KeyPath(old), let value = contents.value(at: oldKey) else { continue }
                try? contents.setValue(nil, at: oldKey)
                try? contents.setValue(value, at: key)
                break
            }
        }
        return contents
    }
}
