#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings find WORD`, like `defaults find`.
enum FindCommand: Command {
    static let name = "find"
    static let summary = "search every domain's keys and values for a word (like defaults find)"
    static let usage = """
        usage: settings find WORD

        Searches every application domain for WORD (any letter case) in its name, its key paths
        and its values, and prints, for each domain with a match, the top-level keys that match:
          Found 1 keys in domain 'MyApp': { ... }
        Values under secret-named keys (password, token, apiKey...) are neither searched nor
        printed (they show as <redacted>); --show-secrets searches and prints them.
        Exits 1 when a domain's file cannot be read (the others are still searched).
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 1 else { throw .usage("find: expected WORD") }
        let word = positional[0].lowercased()
        var found = false, failed = false
        for name in DomainsCommand.applicationDomains() {
            let contents: PlistDictionary
            let marks: SecretMarks
            do {
                let domain = try Domain(name)
                contents = try domain.contents()
                marks = SecretMarks.of(domain)
            } catch {
                Console.error(error.message)
                failed = true
                continue
            }
            // Searched and printed as `read` prints it: a secret's value (by its name or the
            // schema's x-secret) is neither shown nor matched (finding "hunter2" would confirm
            // the password), unless --show-secrets.
            guard case .dictionary(let visible) = marks.shown(PlistValue.dictionary(contents), at: [[]]) else { continue }
            var matches = PlistDictionary()
            for (key, value) in visible where name.lowercased().contains(word) || key.lowercased().contains(word) || value.contains(word) {
                _ = matches.replaceValue(value, forKey: key)
            }
            guard !matches.isEmpty else { continue }
            found = true
            Console.print("Found \(matches.count) keys in domain '\(name.escapingControlCharacters)': " + PlistValue.dictionary(matches).literalText)
        }
        if !found { Console.print("No domain, key, nor value containing '\(positional[0])'") }
        if failed { throw .silentFailure }
    }
}
