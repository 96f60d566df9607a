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

/// `settings read-type DOMAIN KEY`, like `defaults read-type`.
enum ReadTypeCommand: Command {
    static let name = "read-type"
    static let summary = "print the type of a key (like defaults read-type)"
    static let usage = """
        usage: settings read-type DOMAIN KEY

        Prints "Type is T", T one of string, integer, float, boolean, date, data, array,
        dictionary (defaults' names). Exits 1 when the domain or KEY does not exist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 2 else { throw .usage("read-type: expected DOMAIN KEY") }
        let domain = try Domain(positional[0])
        let key = try KeyPath(positional[1])
        let contents = try domain.contents()
        guard let value = contents.value(at: key) else { throw domain.noValue(key, in: contents) }
        Console.print("Type is \(value.defaultsTypeName)")
    }
}

extension PlistValue {
    /// The type as `defaults read-type` names it.
    var defaultsTypeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "float"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        case .uid: "uid"
        }
    }
}

/// `settings write DOMAIN KEY VALUE`, like `defaults write`.
enum WriteCommand: Command {
    static let name = "write"
    static let summary = "write a key (like defaults write)"
    static let usage = """
        usage: settings write DOMAIN KEY VALUE
               settings write DOMAIN KEY -string|-int|-float|-bool|-date|-data VALUE
               settings write DOMAIN KEY -array [VALUE ...]      (-array-add appends)
               settings write DOMAIN KEY -dict [KEY VALUE ...]   (-dict-add adds keys)
               settings write DOMAIN '{ KEY = VALUE; ... }'      (replaces every key)

        Writes VALUE under KEY (Root/Sub/Key creates the namespaces). An untyped VALUE that starts
        with { ( < " or ' is read in the plist-literal syntax `defaults write` takes:
        '{ a = 1; }', '( x, y )', '<0fbd>', '"quoted text"', and exits 1 when it does not parse;
        bare numbers and YES/NO become numbers and Booleans (quote them to keep text: '"42"'),
        unless KEY already holds a string or the domain's schema (settings schema) says it is
        text; any other text is stored as it is. When the application wrote a schema beside the
        domain, a value that does not fit it is refused (exit 1, nothing changed).
        -array and -dict values are strings. The file is changed under the Settings library's
        lock, keeping its format, permissions and owner; a file that does not parse is refused
        and left as it is.
        """

    static let typeFlags: Set<String> = [
        "-string", "-int", "-integer", "-float", "-bool", "-boolean", "-date", "-data",
        "-array", "-array-add", "-dict", "-dict-add",
    ]

    static func run(_ arguments: [String]) throws(CLIError) {
        if arguments.count == 2, arguments[1].first(where: { !$0.isWhitespace }) == "{" {
            return try replaceDomain(try Domain(arguments[0]), with: arguments[1])
        }
        guard arguments.count >= 3 else { throw .usage("write: expected DOMAIN KEY VALUE") }
        let domain = try Domain(arguments[0])
        let key = try KeyPath(arguments[1])
        let rest = Array(arguments[2...])
        let flag = rest.first.flatMap { typeFlags.contains($0) ? $0 : nil }
        if let flag, !["-array", "-array-add", "-dict", "-dict-add"].contains(flag), rest.count != 2 {
            throw .usage("write: \(flag) takes one value")
        }
        if flag == nil, rest.count != 1 {
            if let option = rest.first, option.hasPrefix("-"), PlistValue.inferredScalar(option) == nil {
                throw .usage("write: unknown type \(option) (use -string, -int, -float, -bool, -date, -data, -array, -array-add, -dict or -dict-add)")
            }
            throw .usage("write: expected one VALUE (quote it, or use -array / -dict)")
        }
        // A bare number or YES/NO is kept as text where the application's schema wants text (for
        // an old name, the schema of the key it became). A companion directory that cannot be
        // used is reported by the edit.
        let target = try Files.target(of: domain.path).path
        let current = ((try? PlistLayersManifest.read(beside: target)) ?? nil)?.currentName(of: key.path).flatMap { try? KeyPath($0) }
        let schemaWantsText = ((try? SchemaFile.beside(target)) ?? nil)?.schema
            .subschema(at: (current ?? key).components)?["type"] == "string"
        try domain.edit(creating: true) { contents throws(CLIError) in
            let existing = contents.value(at: key)
            let value: PlistValue
            switch flag {
            case "-array-add"?:
                let added = rest.dropFirst().map { PlistValue.string($0) }
                switch existing {
                case nil: value = .array(added)
                case .array(let items)?: value = .array(items + added)
                case let other?:
                    throw .failure("\(domain.path): key '\(key.path)' holds \(other.kindWithArticle), not an array; not changed")
                }
            case "-dict-add"?:
                let added = try typed("-dict", Array(rest.dropFirst()), domain: domain, key: key).dictionaryValue ?? PlistDictionary()
                var dict: PlistDictionary
                switch existing {
                case nil: dict = PlistDictionary()
                case .dictionary(let d)?: dict = d
                case let other?:
                    throw .failure("\(domain.path): key '\(key.path)' holds \(other.kindWithArticle), not a dictionary; not changed")
                }
                for (k, v) in added { _ = dict.replaceValue(v, forKey: k) }
                value = .dictionary(dict)
            case let flag?:
                value = try typed(flag, Array(rest.dropFirst()), domain: domain, key: key)
            case nil:
                value = try untypedValue(rest[0], existing: existing, wantsText: schemaWantsText, domain: domain, key: key)
            }
            do throws(CLIError) {
                try contents.setValue(value, at: key)
            } catch {
                throw .failure("\(domain.path): \(error.message); not changed")
            }
        }
    }

    static func typed(_ flag: String, _ values: [String], domain: Domain, key: KeyPath) throws(CLIError) -> PlistValue {
        do {
            return try PlistValue.fromDefaultsArgument(type: flag, values)
        } catch {
            throw .failure("\(domain.path): key '\(key.path)': \(error.message)")
        }
    }

    /// An untyped VALUE: a bare number or Boolean is typed (unless the key holds a string, or the
    /// number would not print back as typed: `01234`, `+15551234` and `1.0` stay the text the
    /// user typed, as `defaults` keeps every bare value); text that opens a plist literal must
    /// parse as one; anything else is text as it is.
    static func untypedValue(_ text: String, existing: PlistValue?, wantsText: Bool, domain: Domain, key: KeyPath) throws(CLIError) -> PlistValue {
        if let scalar = PlistValue.inferredScalar(text) {
            if case .string? = existing { return .string(text) }
            if wantsText { return .string(text) }
            if case .bool = scalar { return scalar }
            return scalar.literalText == text ? scalar : .string(text)
        }
        guard let first = text.first(where: { !$0.isWhitespace }), "{(<\"'".contains(first) else { return .string(text) }
        do {
            return try PlistValue(literal: text, inferringTypes: true)
        } catch {
            throw .failure("\(domain.path): key '\(key.path)': the value does not parse: \(error) (quote the whole value for text, or use -string)")
        }
    }

    /// `write DOMAIN '{ ... }'`: the domain holds exactly the literal's keys.
    static func replaceDomain(_ domain: Domain, with text: String) throws(CLIError) {
        let value: PlistValue
        do {
            value = try PlistValue(literal: text, inferringTypes: true)
        } catch {
            throw .failure("\(domain.path): the value does not parse: \(error)")
        }
        let incoming = try Domain.dictionary(value, path: "the value")
        try domain.edit(creating: true) { contents in contents = incoming }
    }
}

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

extension PlistValue {
    /// Whether a key or a scalar's text anywhere in this value contains `word` (lower-cased).
    func contains(_ word: String) -> Bool {
        switch self {
        case .dictionary(let dict):
            return dict.contains { $0.key.lowercased().contains(word) || $0.value.contains(word) }
        case .array(let items):
            return items.contains { $0.contains(word) }
        default:
            return displayText.lowercased().contains(word)
        }
    }
}

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

/// `settings export DOMAIN FILE`, like `defaults export`.
enum ExportCommand: Command {
    static let name = "export"
    static let summary = "write a domain to a plist file (like defaults export)"
    static let usage = """
        usage: settings export DOMAIN FILE [--binary]

        Writes the domain's keys to FILE as an XML plist (binary with --binary), atomically,
        keeping an existing FILE's permissions and owner; '-' writes to standard output.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        var binary = false
        var positional: [String] = []
        for arg in arguments {
            if arg == "--binary" { binary = true } else if arg.hasPrefix("-") && arg != "-" { throw .usage("export: unknown option \(arg)") } else { positional.append(arg) }
        }
        guard positional.count == 2 else { throw .usage("export: expected DOMAIN FILE") }
        let domain = try Domain(positional[0])
        let contents = try domain.contents()
        let bytes: [UInt8]
        do {
            bytes = try PlistValue.dictionary(contents).encodedBytes(as: binary ? .binary : .xml)
        } catch {
            throw .failure(error.inFile(domain.path).description)
        }
        try Output(positional[1]).write(bytes)
    }
}

/// The arguments, refusing options (none of these commands has any).
func plainArguments(_ arguments: [String], command: String) throws(CLIError) -> [String] {
    if let option = arguments.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
        throw .usage("\(command): unknown option \(option)")
    }
    return arguments
}

/// Where a command's result goes: a file (replaced atomically, keeping its permissions and
/// owner) or, for `-`, standard output.
struct Output {
    let path: String

    init(_ path: String) { self.path = path }

    func write(_ bytes: [UInt8]) throws(CLIError) {
        if path == "-" {
            Console.write(bytes)
        } else if let domain = Domain.managing(file: path) {
            // A file the Settings library manages (`create`, `-o` onto a domain's file) is
            // replaced as `import` replaces a domain: locked, checked, kept in its history.
            let input = try Input(parsing: bytes, name: path)
            guard input.syntax.isPropertyListFile else {
                throw .failure("\(path): the Settings library manages this file, and it must stay a property list; not written as \(input.syntax.name)")
            }
            let contents = try Domain.dictionary(input.value, path: path)
            try domain.edit(creating: true, format: input.syntax == .binary ? .binary : .xml) { $0 = contents }
        } else {
            try Files.replace(path, with: bytes)
        }
    }
}
