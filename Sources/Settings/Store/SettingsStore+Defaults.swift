#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist

nonisolated extension SettingsStore {
    /// Registers defaults from code and checks a settings value against every registration so far.
    ///
    /// ```swift
    /// let warnings = store.registerDefaults(["Network": ["timeout": 30]], checking: AppSettings())
    /// // setting 'Network/proxy' (String?, AppSettings.proxy) has no default in code or in the registered defaults
    /// ```
    ///
    /// - Parameters:
    ///   - defaults: the defaults, nested dictionaries for namespaces; merged deeply over earlier
    ///     registrations (later ones win).
    ///   - settings: a value whose `@Setting`s (nested ``SettingsGroup``s included) are checked
    ///     against this store's registered defaults, or `nil` to check nothing. Key-less settings in
    ///     it are bound to their derived keys first (keeping their stores).
    /// - Returns: a ``SettingsDiagnostic/Kind/missingDefault`` diagnostic for every optional setting
    ///   that has no registered default and did not opt out; each is also sent to
    ///   ``SettingsDiagnostics/handler``.
    @discardableResult
    public func registerDefaults(_ defaults: PlistDictionary, checking settings: Any? = nil) -> [SettingsDiagnostic] {
        register(defaults: defaults)
        return checkDefaults(of: settings, registeredIn: "the registered defaults")
    }

    /// Registers the defaults in a plist file: a plain dictionary of defaults, or an iOS
    /// `Settings.bundle/Root.plist` whose `PreferenceSpecifiers` give each `Key` its `DefaultValue`
    /// (child panes, `PSChildPaneSpecifier` entries naming a sibling `File`, are followed).
    ///
    /// Nothing is registered when any file fails. A settings value given as `settings` is checked
    /// against every registration so far, as in ``registerDefaults(_:checking:)``.
    ///
    /// ```swift
    /// let warnings = try store.registerDefaults(contentsOf: URL(filePath: "Defaults.plist"), checking: AppSettings())
    /// // setting 'Network/proxy' (String?, AppSettings.proxy) has no default in code or in Defaults.plist
    /// ```
    ///
    /// - Parameters:
    ///   - url: the plist file, XML or binary.
    ///   - settings: a value whose settings are checked for missing defaults, or `nil`.
    /// - Returns: the missing-default warnings (also sent to ``SettingsDiagnostics/handler``).
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/missingFile`` for a missing file (the
    ///   root or a child pane), ``SettingsError/Code/invalidFile`` for one that cannot be read or
    ///   parsed (the `PlistError` with its position inside), whose root is not a dictionary, or a
    ///   malformed `Settings.bundle` pane.
    @discardableResult
    public func registerDefaults(contentsOf url: URL, checking settings: Any? = nil) throws(SettingsError) -> [SettingsDiagnostic] {
        var defaults = try Self.readDictionary(at: url)
        if SettingsBundleReader.isSettingsPane(defaults) {
            let pane = try SettingsBundleReader.read(rootPane: defaults, at: url)
            defaults = pane.defaults
            values.storage.locked { $0.sources.bundleTexts.merge(pane.texts) { _, new in new } }  // hook (schema texts)
        }
        register(defaults: defaults, path: url.path)
        return checkDefaults(of: settings, registeredIn: url.lastPathComponent)
    }

    /// Reads the plist file at `url`, whose root must be a dictionary.
    ///
    /// - Throws: ``SettingsError`` with ``SettingsError/Code/missingFile`` when the file does not
    ///   exist, ``SettingsError/Code/invalidFile`` when it cannot be read or parsed or its root is
    ///   not a dictionary.
    static func readDictionary(at url: URL) throws(SettingsError) -> PlistDictionary {
        let value: PlistValue
        do {
            value = try PlistValue(contentsOf: url)
        } catch {
            if error.code == .io && !FileManager.default.fileExists(atPath: url.path) {
                throw SettingsError(.missingFile, path: url.path)
            }
            throw SettingsError(.invalidFile, path: url.path, underlying: error)
        }
        guard case .dictionary(let dictionary) = value else {
            throw SettingsError(.invalidFile, path: url.path, detail: "the root is \(value.typeNameWithArticle), expected a dict")
        }
        return dictionary
    }

    // MARK: Missing defaults

    /// Warns about every setting in `settings` that has no default in code and none registered.
    ///
    /// - Parameters:
    ///   - settings: the value to check, or `nil` for no check.
    ///   - source: how the latest registration is named in the message.
    /// - Returns: the warnings, each already reported.
    func checkDefaults(of settings: Any?, registeredIn source: String) -> [SettingsDiagnostic] {
        guard let settings else { return [] }
        Self.bind(settings)
        let containerName = String(describing: type(of: settings))
        var warnings: [SettingsDiagnostic] = []
        for (path, box) in Self.settingPaths(in: settings) {
            guard !box.hasDefaultInCode, box.warnsWhenDefaultIsMissing, let key = box.key else { continue }
            guard value(for: key, in: .defaults) == nil else { continue }
            let property = ([containerName] + path).joined(separator: ".")
            warnings.append(SettingsDiagnostic(
                .missingDefault, key: key,
                "setting '\(key.path)' (\(box.typeName)?, \(property)) has no default in code or in \(source)"))
        }
        warnings.forEach(report)
        return warnings
    }

    /// Every setting in `container` and its nested settings groups, with the property names that
    /// lead to it (`["network", "proxy"]`), so a warning can say where the setting is declared.
    static func settingPaths(in container: Any, prefix: [String] = []) -> [(path: [String], box: any AnySettingBox)] {
        guard prefix.count < 16 else { return [] }
        var found: [(path: [String], box: any AnySettingBox)] = []
        for child in Mirror(reflecting: container).children {
            var name = Substring(child.label ?? "?")
            if name.hasPrefix("_") { name = name.dropFirst() }  // the wrapper's storage, `_proxy`
            let path = prefix + [String(name)]
            if let setting = child.value as? any SettingRepresentable {
                found.append((path, setting.settingBox))
            } else if child.value is any SettingsGroup {
                found.append(contentsOf: settingPaths(in: child.value, prefix: path))
            }
        }
        return found
    }
}

/// Reads the defaults out of an iOS `Settings.bundle`: `Root.plist` and the child panes it names
/// (``SettingsPanes``, the reading the `settings` tool shares), with the texts schemas take from them.
enum SettingsBundleReader {
    /// Whether `root` is a Settings.bundle pane: its `PreferenceSpecifiers` is an array.
    static func isSettingsPane(_ root: PlistDictionary) -> Bool {
        SettingsPanes.isPane(root)
    }

    /// The defaults of the pane `root` (read from `url`) and of every child pane reachable from it
    /// (``SettingsPanes/defaults(of:)``), and what the panes say of each key for schemas.
    ///
    /// - Throws: ``SettingsError`` naming the file: a missing or unreadable child pane, a pane
    ///   without a `PreferenceSpecifiers` array, an entry that is not a dictionary, or a child
    ///   pane `File` that is not a plain file name.
    static func read(rootPane root: PlistDictionary, at url: URL) throws(SettingsError) -> (defaults: PlistDictionary, texts: [SettingsKey: BundleText]) {
        let entries = try SettingsPanes.entries(
            ofRoot: root, at: url.path,
            reading: { (child, file, parent) throws(SettingsError) in
                do throws(SettingsError) {
                    return try SettingsStore.readDictionary(at: URL(filePath: child, directoryHint: .notDirectory))
                } catch {
                    throw error.naming(file: file, parent: parent)
                }
            },
            failure: { path, detail, namedBy in
                let error = SettingsError(.invalidFile, path: path, detail: detail)
                return namedBy.map { error.naming(file: $0.file, parent: $0.parent) } ?? error
            })
        var texts: [SettingsKey: BundleText] = [:]
        var group: String?
        for entry in entries.map({ $0.specifier }) {
            if entry["Type"]?.stringValue == "PSGroupSpecifier" { group = entry["Title"]?.stringValue }
            if let key = entry["Key"]?.stringValue {
                let values = entry["Values"]?.arrayValue ?? [], titles = (entry["Titles"]?.arrayValue ?? []).compactMap { $0.stringValue }
                texts[SettingsKey(components: [key])] = BundleText(
                    title: entry["Title"]?.stringValue, group: group, order: texts.count,
                    valueTitles: values.count == titles.count ? Array(zip(values, titles)) : [])
            }
        }
        return (SettingsPanes.defaults(of: entries), texts)
    }

    /// What a `Settings.bundle` pane says of one key, for schemas: its `Title`, the title of the
    /// group (`PSGroupSpecifier`) it is in, its place in the panes, and the `Titles` of a
    /// multi-value's `Values`.
    struct BundleText: Sendable {
        var title: String?
        var group: String?
        var order: Int
        var valueTitles: [(value: PlistValue, title: String)]
    }
}

extension SettingsError {
    /// This error of a child pane's file, its detail naming the pane that refers to it.
    fileprivate func naming(file: String, parent: String) -> SettingsError {
        var error = self
        let reference = "child pane '\(file)' of \(parent)"
        error.detail = error.detail.map { "\($0) (\(reference))" } ?? reference
        return error
    }
}
