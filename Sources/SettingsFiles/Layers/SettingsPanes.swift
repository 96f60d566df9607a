package import SettingsPlist

/// An iOS-style `Settings.bundle`: `Root.plist` and the child panes it names, read as the
/// defaults they give. The one reading of a registered bundle, for the store
/// (`registerDefaults(contentsOf:)`) and for the `settings` tool, which finds the bundle among
/// the defaults files a program recorded in its layers manifest (`explain`, `edit`).
package enum SettingsPanes {
    /// The `Type` of an entry that opens another pane.
    package static let childPaneType = "PSChildPaneSpecifier"

    /// Whether `root` is a Settings.bundle pane: its `PreferenceSpecifiers` is an array.
    package static func isPane(_ root: PlistDictionary) -> Bool {
        root["PreferenceSpecifiers"]?.arrayValue != nil
    }

    /// One entry of a pane, and the pane file it is in.
    package struct Entry {
        package var specifier: PlistDictionary
        package var pane: String
    }

    /// Every entry of the pane `root` (read from `path`) and of every child pane reachable from
    /// it, in pane order: a child pane's entries come right after the entry that names it. Each
    /// pane file is read at most once, so panes that name each other (a cycle) or share a child
    /// end; a loop with a stack of its own, bounded by the number of distinct files named.
    ///
    /// - Parameters:
    ///   - root: the root pane's contents.
    ///   - path: where the root pane was read.
    ///   - read: reads a child pane's file (`child`), named `file` by the pane at `parent`.
    ///   - failure: the error for a malformed pane at a path (no `PreferenceSpecifiers` array, an
    ///     entry that is not a dictionary, a child pane `File` that is not a plain file name),
    ///     with the child pane's `File` and the pane that names it when a child pane has no
    ///     `PreferenceSpecifiers` array.
    package static func entries<E: Error>(
        ofRoot root: PlistDictionary, at path: String,
        reading read: (_ child: String, _ file: String, _ parent: String) throws(E) -> PlistDictionary,
        failure: (_ path: String, _ detail: String, _ namedBy: (file: String, parent: String)?) -> E
    ) throws(E) -> [Entry] {
        func specifiers(of pane: PlistDictionary, at path: String, namedBy: (file: String, parent: String)? = nil) throws(E) -> [PlistValue] {
            guard let entries = pane["PreferenceSpecifiers"]?.arrayValue else {
                throw failure(path, "the settings pane has no PreferenceSpecifiers array", namedBy)
            }
            return entries
        }
        var result: [Entry] = []
        var visited: Set<String> = [PlistFile.name(of: path)]
        var pending: [(entries: [PlistValue], pane: String, index: Int)] = [(try specifiers(of: root, at: path), path, 0)]
        while let (entries, pane, index) = pending.popLast() {
            guard index < entries.count else { continue }
            pending.append((entries, pane, index + 1))
            guard case .dictionary(let entry) = entries[index] else {
                throw failure(pane, "PreferenceSpecifiers item \(index) is \(entries[index].typeNameWithArticle), expected a dict", nil)
            }
            result.append(Entry(specifier: entry, pane: pane))
            guard entry["Type"]?.stringValue == childPaneType, let file = entry["File"]?.stringValue else { continue }
            guard let child = PlistFile.childPane(named: file, inDirectory: PlistFile.directory(of: pane)) else {
                throw failure(pane, "child pane File '\(file)' is not a file name in the same directory", nil)
            }
            guard visited.insert(PlistFile.name(of: child)).inserted else { continue }
            pending.append((try specifiers(of: try read(child, file, pane), at: child, namedBy: (file, pane)), child, 0))
        }
        return result
    }

    /// The defaults `entries` give: each entry's `DefaultValue` under its `Key`, taken literally
    /// (iOS keys have no namespaces), a later entry winning. Entries without either, such as group
    /// titles, give none.
    package static func defaults(of entries: [Entry]) -> PlistDictionary {
        var defaults = PlistDictionary()
        for entry in entries {
            if let key = entry.specifier["Key"]?.stringValue, let value = entry.specifier["DefaultValue"] { defaults[key] = value }
        }
        return defaults
    }
}
