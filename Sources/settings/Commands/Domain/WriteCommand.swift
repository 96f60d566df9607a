#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

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
