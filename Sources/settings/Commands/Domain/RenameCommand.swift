#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings rename DOMAIN OLD NEW`, like `defaults rename`.
enum RenameCommand: Command {
    static let name = "rename"
    static let summary = "rename a key (like defaults rename)"
    static let usage = """
        usage: settings rename [--force] DOMAIN OLD_KEY NEW_KEY

        Moves the value of OLD_KEY to NEW_KEY (key paths). A value already at NEW_KEY is kept and
        the command exits 1, changing nothing, unless --force (-f) is given: then it is replaced.
        Exits 1 when the domain or OLD_KEY does not exist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let force = arguments.contains("--force") || arguments.contains("-f")
        let positional = try plainArguments(arguments.filter { $0 != "--force" && $0 != "-f" }, command: name)
        guard positional.count == 3 else { throw .usage("rename: expected [--force] DOMAIN OLD_KEY NEW_KEY") }
        let domain = try Domain(positional[0])
        let old = try KeyPath(positional[1]), new = try KeyPath(positional[2])
        try domain.edit(creating: false) { contents throws(CLIError) in
            guard let value = contents.value(at: old) else { throw domain.noValue(old, in: contents) }
            if !force, new.components != old.components, let existing = contents.value(at: new) {
                throw .failure("\(domain.path): key '\(new.path)' already holds \(existing.kindWithArticle); not changed (--force replaces it)")
            }
            do throws(CLIError) {
                try contents.setValue(nil, at: old)
                try contents.setValue(value, at: new)
            } catch {
                throw .failure("\(domain.path): \(error.message); not changed")
            }
        }
    }
}
