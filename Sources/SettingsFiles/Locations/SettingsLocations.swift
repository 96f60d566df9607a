#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a domain's files live: the user's own file under `$XDG_CONFIG_HOME`, and the
/// administrator's files under each directory of `$XDG_CONFIG_DIRS`. The one place these rules
/// are written; the library's stores and the `settings` tool both ask here.
///
/// ```swift
/// let env = ["HOME": "/home/ada"]
/// SettingsLocations.userFile(application: "App", environment: { env[$0] })
/// // "/home/ada/.config/App/settings.plist"
/// SettingsLocations.systemDirectories(environment: { env[$0] })   // ["/etc/xdg"]
/// ```
public enum SettingsLocations {
    /// The name of a domain's settings file, in the user's and in each system directory.
    public static let settingsFileName = "settings.plist"
    /// The name of the file of locked keys in a system directory.
    public static let lockedFileName = "locked.plist"
    /// The system directory read when `$XDG_CONFIG_DIRS` is unset or empty (XDG Base Directory).
    public static let defaultSystemDirectory = "/etc/xdg"

    /// Where the user's application directories live: `$XDG_CONFIG_HOME` when it is an absolute
    /// path, else `$HOME/.config` (`HOME` when set and not empty, else the password database's
    /// home directory). No trailing `/`.
    ///
    /// - Parameter environment: looks up an environment variable.
    public static func userConfigDirectory(environment: (String) -> String?) -> String {
        if let xdg = environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return trimmed(xdg) }
        var home = environment("HOME").flatMap { $0.isEmpty ? nil : $0 }
        if home == nil, let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir {
            home = String(cString: dir)
        }
        return trimmed(home ?? "/") + "/.config"
    }

    /// The user's settings file of `application`: `<user config directory>/<application>/settings.plist`.
    ///
    /// - Parameters:
    ///   - application: the application (domain) name.
    ///   - environment: looks up an environment variable.
    public static func userFile(application: String, environment: (String) -> String?) -> String {
        userConfigDirectory(environment: environment) + "/" + application + "/" + settingsFileName
    }

    /// The system directories, most important first: each absolute entry of `$XDG_CONFIG_DIRS`
    /// (`:`-separated; relative entries are ignored, as the XDG Base Directory specification
    /// says), or `/etc/xdg` when it names none. No trailing `/`, no repeats.
    ///
    /// - Parameter environment: looks up an environment variable.
    public static func systemDirectories(environment: (String) -> String?) -> [String] {
        var directories: [String] = []
        for entry in (environment("XDG_CONFIG_DIRS") ?? "").split(separator: ":") where entry.hasPrefix("/") {
            let directory = trimmed(String(entry))
            if !directories.contains(directory) { directories.append(directory) }
        }
        return directories.isEmpty ? [defaultSystemDirectory] : directories
    }

    /// The process's environment, as the functions here take it.
    public static func processEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// `path` without trailing slashes (`/` alone becomes the empty string, so that joining
    /// `"" + "/x"` gives `/x`).
    static func trimmed(_ path: String) -> String {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path == "/" ? "" : path
    }
}
