#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Settings
import SettingsPlist

/// `settings read DOMAIN [KEY]`, like `defaults read`.
enum ReadCommand: Command {
    static let name = "read"
    static let summary = "print a domain, or one key of it (like defaults read)"
    static let usage = """
        usage: settings read DOMAIN [KEY]

        Prints the whole domain, or the value of KEY, in the OpenStep text syntax `defaults` uses.
        A string value of KEY prints as it is, without quotes.
          DOMAIN  an application name (its file is $XDG_CONFIG_HOME/NAME/settings.plist, ~/.config
                  when unset), or a path to a plist file (contains '/' or ends in .plist)
          KEY     a key path: Root/Sub/Key (\\/ for a slash inside a key)
        Exits 1 when the domain does not exist or has no value for KEY.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard (1...2).contains(positional.count) else { throw .usage("read: expected DOMAIN [KEY]") }
        let domain = try Domain(positional[0])
        guard FileManager.default.fileExists(atPath: domain.path) else {
            throw .failure("\(domain.path): domain '\(domain.argument)' does not exist")
        }
        let contents = try domain.contents()
        guard positional.count == 2 else {
            Console.print(shown(PlistValue.dictionary(contents)).literalText)
            return
        }
        let key = try parseKey(positional[1])
        guard let value = contents.value(at: key) else {
            throw .failure("\(domain.path): no value for key '\(key.path)'")
        }
        Console.print(shown(value, under: key).displayText)
    }
}

/// `settings write DOMAIN KEY VALUE`, like `defaults write`.
enum WriteCommand: Command {
    static let name = "write"
    static let summary = "write a key (like defaults write)"
    static let usage = """
        usage: settings write DOMAIN KEY VALUE
               settings write DOMAIN KEY -string|-int|-float|-bool|-date|-data VALUE
               settings write DOMAIN KEY -array [VALUE ...]
               settings write DOMAIN KEY -dict [KEY VALUE ...]

        Writes VALUE under KEY (Root/Sub/Key creates the namespaces). An untyped VALUE is read in
        the plist-literal syntax `defaults write` takes: '{ a = 1; }', '( x, y )', '<0fbd>',
        "quoted text"; bare numbers and YES/NO become numbers and Booleans (quote them to keep
        text: '"42"'), unless KEY already holds a string.
        The write goes through the Settings library: locked, merged with what other processes
        wrote, and durable when the command exits.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        guard arguments.count >= 3 else { throw .usage("write: expected DOMAIN KEY VALUE") }
        let domain = try Domain(arguments[0])
        let key = try parseKey(arguments[1])
        let rest = Array(arguments[2...])
        let typeFlags: Set<String> = ["-string", "-int", "-integer", "-float", "-bool", "-boolean", "-date", "-data", "-array", "-dict"]
        try domain.change { store throws(CLIError) in
            let value: PlistValue
            if let flag = rest.first, typeFlags.contains(flag) {
                if !["-array", "-dict"].contains(flag) && rest.count != 2 {
                    throw .usage("write: \(flag) takes one value")
                }
                do throws(PlistError) {
                    value = try PlistValue.fromDefaultsArgument(type: flag, Array(rest.dropFirst()))
                } catch {
                    throw .failure("\(domain.path): key '\(key.path)': \(error.message)")
                }
            } else {
                guard rest.count == 1 else { throw .usage("write: expected one VALUE (quote it, or use -array / -dict)") }
                value = literalValue(rest[0], existing: store.value(for: key, in: .user))
            }
            store.set(value, for: key)
        }
    }

    /// An untyped VALUE: a plist literal, typed where it is a bare number or Boolean.
    static func literalValue(_ text: String, existing: PlistValue?) -> PlistValue {
        if case .string? = existing, PlistValue.inferredScalar(text) != nil { return .string(text) }
        if let scalar = PlistValue.inferredScalar(text) { return scalar }
        if let value = try? PlistValue(literal: text, inferringTypes: true), text.first.map("{(<\"'".contains) == true {
            return value
        }
        return .string(text)
    }
}

/// `settings delete DOMAIN [KEY]`, like `defaults delete`.
enum DeleteCommand: Command {
    static let name = "delete"
    static let summary = "delete a key, or every key of a domain"
    static let usage = """
        usage: settings delete DOMAIN [KEY]

        Removes KEY (a key path), or with no KEY every key of the domain (the file stays, empty).
        Keys another process adds meanwhile are kept. Exits 1 when KEY does not exist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard (1...2).contains(positional.count) else { throw .usage("delete: expected DOMAIN [KEY]") }
        let domain = try Domain(positional[0])
        guard FileManager.default.fileExists(atPath: domain.path) else {
            throw .failure("\(domain.path): domain '\(domain.argument)' does not exist")
        }
        let key = positional.count == 2 ? try parseKey(positional[1]) : nil
        try domain.change { store throws(CLIError) in
            guard let key else {
                store.removeAllUserValues()
                return
            }
            guard store.value(for: key, in: .user) != nil else {
                throw .failure("\(domain.path): no value for key '\(key.path)'")
            }
            store.removeValue(for: key)
        }
    }
}

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
        let domain = try Domain(positional[0])
        guard FileManager.default.fileExists(atPath: domain.path) else {
            throw .failure("\(domain.path): domain '\(domain.argument)' does not exist")
        }
        for (key, _) in try domain.contents().leafPaths() { Console.print(key.path) }
    }
}

/// `settings import DOMAIN FILE`, like `defaults import`.
enum ImportCommand: Command {
    static let name = "import"
    static let summary = "replace a domain's keys with a plist file's (like defaults import)"
    static let usage = """
        usage: settings import DOMAIN FILE

        Makes the domain hold exactly the keys of FILE (XML, binary or typed JSON; '-' reads
        standard input): keys of FILE are written, other keys of the domain removed.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 2 else { throw .usage("import: expected DOMAIN FILE") }
        let domain = try Domain(arguments[0])
        let value = arguments[1] == "-" ? try parseInput(readStandardInput(), name: "<stdin>") : try readValue(arguments[1])
        guard case .dictionary(let incoming) = value else {
            throw .failure("\(arguments[1]): the root is a \(value.typeName), expected a dict")
        }
        try domain.change { store in
            for key in store.contents(of: .user).keys where incoming[key] == nil {
                store.removeValue(for: SettingsKey(components: [key]))
            }
            for (key, value) in incoming { store.set(value, for: SettingsKey(components: [key])) }
        }
    }
}

/// `settings export DOMAIN FILE`, like `defaults export`.
enum ExportCommand: Command {
    static let name = "export"
    static let summary = "write a domain to a plist file (like defaults export)"
    static let usage = """
        usage: settings export DOMAIN FILE [--binary]

        Writes the domain's keys to FILE as an XML plist (binary with --binary), atomically;
        '-' writes to standard output.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        var binary = false
        var positional: [String] = []
        for arg in arguments {
            if arg == "--binary" { binary = true } else if arg.hasPrefix("-") && arg != "-" { throw .usage("export: unknown option \(arg)") } else { positional.append(arg) }
        }
        guard positional.count == 2 else { throw .usage("export: expected DOMAIN FILE") }
        let domain = try Domain(positional[0])
        guard FileManager.default.fileExists(atPath: domain.path) else {
            throw .failure("\(domain.path): domain '\(domain.argument)' does not exist")
        }
        let bytes: Data
        do {
            bytes = try PlistValue.dictionary(try domain.contents()).encoded(as: binary ? .binary : .xml)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(domain.path): \(error)")
        }
        if positional[1] == "-" {
            Console.write(Array(bytes))
        } else {
            try writeFile(bytes, to: positional[1])
        }
    }
}

/// The arguments, refusing options (none of these commands has any).
func plainArguments(_ arguments: [String], command: String) throws(CLIError) -> [String] {
    if let option = arguments.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
        throw .usage("\(command): unknown option \(option)")
    }
    return arguments
}
