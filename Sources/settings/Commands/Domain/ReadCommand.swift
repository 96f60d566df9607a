#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings read DOMAIN [KEY]`, like `defaults read`.
enum ReadCommand: Command {
    static let name = "read"
    static let summary = "print a domain, or one key of it (like defaults read)"
    static let usage = """
        usage: settings read DOMAIN [KEY]

        Prints the whole domain, or the value of KEY, in the OpenStep text syntax `defaults` uses.
        A string value of KEY prints as it is, without quotes.
          DOMAIN  an application name (its file is $XDG_CONFIG_HOME/NAME/settings.plist, ~/.config
                  when unset), or a file: an argument that contains '/', ends in .plist, .bplist
                  or .json, or names an existing file
          KEY     a key path: Root/Sub/Key (\\/ for a slash inside a key)
        Values under secret-named keys (password, token, apiKey...) print as <redacted>;
        --show-secrets prints them.
        Exits 1 when the domain does not exist or has no value for KEY.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard (1...2).contains(positional.count) else { throw .usage("read: expected DOMAIN [KEY]") }
        let domain = try Domain(positional[0])
        let contents = try domain.contents()
        let marks = SecretMarks.of(domain)
        guard positional.count == 2 else {
            Console.print(marks.shown(PlistValue.dictionary(contents), at: [[]]).literalText)
            return
        }
        let key = try KeyPath(positional[1])
        guard let value = contents.value(at: key) else {
            // A renamed key (the program's layers.plist names it): its value, and a note saying
            // so; secret when either name is.
            guard let renamed = LayersManifest.renamedValue(of: key, in: contents, domain: domain) else { throw domain.noValue(key, in: contents) }
            Console.error(renamed.note)
            return Console.print(marks.shown(renamed.value, at: [key.components, renamed.key.components]).displayText)
        }
        Console.print(marks.shown(value, at: [key.components]).displayText)
    }
}
