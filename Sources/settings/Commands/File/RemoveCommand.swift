#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

/// `settings remove`.
enum RemoveCommand: Command {
    static let name = "remove"
    static let summary = "remove the value at a dotted key path (like plutil -remove)"
    static let usage = """
        usage: settings remove KEYPATH [-o OUT] FILE
               settings -remove KEYPATH FILE         (plutil -remove)

        Removes the value at KEYPATH; exits 1 when there is none. FILE is rewritten as insert
        rewrites it.
        """

    static func run(_ arguments: [String]) throws(CLIError) { try EditCommand.run(.remove, command: name, arguments) }
}
