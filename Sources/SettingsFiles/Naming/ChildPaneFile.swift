extension PlistFile {
    /// Where a Settings.bundle child pane's file is: `<File>.plist` beside the pane that names
    /// it (`PSChildPaneSpecifier`'s `File`), or `nil` when `file` is not a plain file name (empty,
    /// `.`, `..`, or holding a `/`), which could reach outside the bundle. The one rule for the
    /// store's registration of panes and the tool's editor.
    ///
    /// - Parameters:
    ///   - file: the specifier's `File` value.
    ///   - directory: the directory of the pane that names it.
    package static func childPane(named file: String, inDirectory directory: String) -> String? {
        guard !file.isEmpty, !file.contains("/"), file != ".", file != ".." else { return nil }
        return (directory.hasSuffix("/") ? directory : directory + "/") + file + ".plist"
    }
}
