#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings import DOMAIN FILE`, like `defaults import`.
enum ImportCommand: Command {
    static let name = "import"
    static let summary = "replace a domain's keys with a plist file's (like defaults import)"
    static let usage = """
        usage: settings import DOMAIN FILE

        Makes the domain hold exactly the keys of FILE (XML, binary, JSON, typed JSON or OpenStep
        text; '-' reads standard input).
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 2 else { throw .usage("import: expected DOMAIN FILE") }
        let domain = try Domain(arguments[0])
        let incoming = try Domain.dictionary(Input(file: arguments[1]).value, path: arguments[1])
        try domain.edit(creating: true) { contents in contents = incoming }
    }
}
