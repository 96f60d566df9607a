import SettingsPlist
import SettingsFiles

/// `settings writable DOMAIN KEY`: whether the program may change KEY (`gsettings writable`).
enum WritableCommand: Command {
    static let name = "writable"
    static let summary = "print whether a key may be changed (false when an administrator locked it)"
    static let usage = """
        usage: settings writable DOMAIN KEY

        Prints true when KEY may be changed, false when an administrator locked it in a
        locked.plist of a system directory ($XDG_CONFIG_DIRS, /etc/xdg when unset; /etc/xdg is
        read for locks whatever the variable says); the locking file is named on standard error.
        A namespace is not writable when a key inside it is locked. Exits 0 either way.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 2 else { throw .usage("writable: expected DOMAIN KEY") }
        let domain = try Domain(positional[0])
        let key = try KeyPath(positional[1])
        if let file = domain.administratorFiles().lockingFile(of: key.components) {
            Console.error("'\(key.path)' is locked by \(file)")
            Console.print("false")
        } else {
            Console.print("true")
        }
    }
}
