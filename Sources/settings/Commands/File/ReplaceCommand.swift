#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

/// `settings replace`.
enum ReplaceCommand: Command {
    static let name = "replace"
    static let summary = "set the value at a dotted key path (like plutil -replace)"
    static let usage = """
        usage: settings replace KEYPATH -TYPE VALUE [-o OUT] FILE
               settings -replace KEYPATH -TYPE VALUE FILE    (plutil -replace)

        Sets the value at KEYPATH, whether or not one is there (the containers on the way must
        exist). Types: \(EditCommand.typeList). FILE is rewritten as insert rewrites it.
        """

    static func run(_ arguments: [String]) throws(CLIError) { try EditCommand.run(.replace, command: name, arguments) }
}
