#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings delete DOMAIN [KEY]`, like `defaults delete`.
enum DeleteCommand: Command {
    static let name = "delete"
    static let summary = "delete a key, or every key of a domain"
    static let usage = """
        usage: settings delete DOMAIN [KEY]

        Removes KEY (a key path), or with no KEY every key of the domain (the file stays, empty).
        Exits 1 when the domain or KEY does not exist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard (1...2).contains(positional.count) else { throw .usage("delete: expected DOMAIN [KEY]") }
        let domain = try Domain(positional[0])
        let key = positional.count == 2 ? try KeyPath(positional[1]) : nil
        try domain.edit(creating: false) { contents throws(CLIError) in
            guard let key else {
                contents = PlistDictionary()
                return
            }
            guard contents.value(at: key) != nil else { throw domain.noValue(key, in: contents) }
            try contents.setValue(nil, at: key)
        }
    }
}
