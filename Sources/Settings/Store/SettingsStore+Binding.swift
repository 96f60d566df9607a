import Synchronization

extension SettingsStore {
    /// Binds the settings of a container found by reflection: a key-less `@Setting` gets the key
    /// derived from its property name (MFDynamic's rule: first letter capitalised, so
    /// `launchAtStartup` becomes `LaunchAtStartup`), and every setting of the container (and of
    /// nested settings groups) is moved to `store` when one is given.
    ///
    /// ```swift
    /// struct Prefs { @Setting(default: false) var launchAtStartup: Bool }
    /// let prefs = SettingsStore.bind(Prefs())    // prefs.$launchAtStartup.key == "LaunchAtStartup"
    /// ```
    ///
    /// - Parameters:
    ///   - container: a value whose stored properties include settings.
    ///   - store: the store to use, or `nil` to keep each setting's own.
    /// - Returns: `container`, for chaining.
    @discardableResult
    public static func bind<Container>(_ container: Container, to store: SettingsStore? = nil) -> Container {
        for (name, box) in settings(in: container) {
            box.bind(derivedKey: derivedKey(for: name), store: store)
        }
        return container
    }

    /// The key MFDynamic derives from a property name: its first letter capitalised.
    ///
    /// - Parameter propertyName: the property's name (a leading `_` from the wrapper is dropped).
    public static func derivedKey(for propertyName: String) -> SettingsKey {
        var name = Substring(propertyName)
        if name.hasPrefix("_") { name = name.dropFirst() }
        guard let first = name.first else { return SettingsKey(components: [""]) }
        return SettingsKey(components: [first.uppercased() + name.dropFirst()])
    }

    /// Every setting in `container` and its nested settings groups, with its property path.
    static func settings(in container: Any, depth: Int = 0) -> [(name: String, box: any AnySettingBox)] {
        guard depth < 16 else { return [] }
        var found: [(String, any AnySettingBox)] = []
        for child in Mirror(reflecting: container).children {
            let name = child.label ?? ""
            if let setting = child.value as? any SettingRepresentable {
                found.append((name, setting.settingBox))
            } else if child.value is any SettingsGroup {
                found.append(contentsOf: settings(in: child.value, depth: depth + 1))
            }
        }
        return found
    }
}

extension Setting: SettingRepresentable {
    var settingBox: any AnySettingBox { box }
}

extension ReadOnlySetting: SettingRepresentable {
    var settingBox: any AnySettingBox { setting.box }
}
