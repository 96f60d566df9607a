#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

/// `settings reset DOMAIN`: removes every user value, after keeping a generation.
enum ResetCommand: Command {
    static let name = "reset"
    static let summary = "remove every value of a domain, keeping it in history"
    static let usage = """
        usage: settings reset DOMAIN

        Removes every value of the domain (the file stays, empty), after keeping its current
        contents as a generation: 'settings restore DOMAIN GENERATION' brings them back.
        Exits 1 when the domain does not exist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 1 else { throw .usage("reset: expected DOMAIN") }
        try Domain(positional[0]).edit(creating: false) { contents in contents = PlistDictionary() }
    }
}
