#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings domains`, like `defaults domains`.
enum DomainsCommand: Command {
    static let name = "domains"
    static let summary = "list the application domains (like defaults domains)"
    static let usage = """
        usage: settings domains

        Prints the names of the application domains, comma-separated on one line as `defaults`
        does: every directory of $XDG_CONFIG_HOME (~/.config when unset) holding a settings.plist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        guard try plainArguments(arguments, command: name).isEmpty else { throw .usage("domains: takes no arguments") }
        Console.print(applicationDomains().map(\.escapingControlCharacters).joined(separator: ", "))
    }

    /// The names, sorted.
    static func applicationDomains() -> [String] {
        let base = Domain.configDirectory()
        var names: [String] = []
        for name in PlistFile.entryNames(inDirectory: base) ?? [] {
            guard !name.hasPrefix(".") else { continue }
            var s = stat()
            if stat(base + "/" + name + "/settings.plist", &s) == 0, (s.st_mode & S_IFMT) == S_IFREG { names.append(name) }
        }
        return names.sorted()
    }
}
