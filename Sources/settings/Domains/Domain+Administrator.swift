import SettingsPlist
import SettingsFiles

// The administrator's files of an application domain (`<dir>/<app>/settings.plist` and
// `<dir>/<app>/locked.plist` in each `$XDG_CONFIG_DIRS` directory), as the program reads them.
extension Domain {
    /// The application whose administrator's files apply, or `nil` for a domain named by a file
    /// that is not an application's settings file.
    var application: String? {
        isApplication ? PlistFile.name(of: PlistFile.directory(of: path)) : nil
    }

    /// The administrator's files of the domain, read as the library reads them; each file that
    /// does not count is named on standard error with the reason.
    func administratorFiles() -> PlistSystemLayers {
        guard let application else { return PlistSystemLayers() }
        let system = PlistSystemLayers.load(application: application, from: .environment)
        for problem in system.problems { Console.error("warning: \(problem)") }
        return system
    }

    /// Refuses a change of the domain's file that would change a locked key
    /// (``PlistLocks/refusal(changing:to:by:)``): the file is left untouched.
    func refuseLockedChange(from original: PlistDictionary, to result: PlistDictionary) throws(CLIError) {
        if let refusal = PlistLocks.refusal(changing: original, to: result, by: administratorFiles()) {
            throw .failure("\(path): \(refusal)")
        }
    }
}
