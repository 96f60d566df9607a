#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings keys DOMAIN`: every key path, one per line.
enum KeysCommand: Command {
    static let name = "keys"
    static let summary = "list the key paths of a domain"
    static let usage = """
        usage: settings keys DOMAIN

        Prints every key path of the domain, one per line, in file order: nested keys as
        Root/Sub/Key (a '/' inside a key is written \\/).
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 1 else { throw .usage("keys: expected DOMAIN") }
        for (key, _) in try Domain(positional[0]).contents().leafPaths() { Console.print(key.path.escapingControlCharacters) }
    }
}
