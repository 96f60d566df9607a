#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

/// `settings print [-p | --xml | --json | --typed-json | --openstep] FILE`.
enum PrintCommand: Command {
    static let name = "print"
    static let summary = "print a plist file: human-readable (-p), XML, JSON, typed JSON or OpenStep"
    static let usage = """
        usage: settings print [-p | --xml | --json | --typed-json | --openstep] FILE
               settings -p FILE                      (plutil -p)

        Prints FILE ('-' reads standard input; XML, binary, JSON, typed JSON or OpenStep text).
          -p             human-readable, like plutil -p ("key" => value); not for machines
          --xml          as an XML plist (the default)
          --json         as plain JSON with two-space indentation (dates and data have no JSON
                         form: refused, naming the key path; use --typed-json for them)
          --typed-json   as canonical typed JSON: {"dict": [["key", {"int": 1}], ...]}
          --openstep     as OpenStep text, as `read` prints a domain
          --show-secrets values under secret-named keys (password, token, apiKey...) as they
                         are, not <redacted> (XML and JSON output that redacted a value says so
                         on standard error)
        Exits 1 with a one-line error naming the file and position when FILE is malformed.
        """

    enum Style { case human, xml, json, typedJSON, openStep }

    static func run(_ arguments: [String]) throws(CLIError) {
        var style = Style.xml
        var files: [String] = []
        for arg in arguments {
            switch arg {
            case "-p": style = .human
            case "--xml": style = .xml
            case "--typed-json": style = .typedJSON
            case "--json": style = .json
            case "--openstep": style = .openStep
            case "-s", "-n": break  // plutil takes them on every verb; they change nothing here (nor in plutil -p)
            case _ where arg.hasPrefix("-") && arg != "-": throw .usage("print: unknown option \(arg)")
            default: files.append(arg)
            }
        }
        guard files.count == 1, let file = files.first else { throw .usage("print: expected one FILE") }
        let original = try Input(file: file).value
        let value = shown(original)  // secrets redacted unless --show-secrets
        if value != original, style == .xml || style == .json || style == .typedJSON {
            // A machine format is a copy someone may keep: never silently one with holes in it.
            Console.error("\(file): values under secret-named keys are printed as \(PlistSecrets.redactedText): this output is not a copy of the file (--show-secrets prints them)")
        }
        switch style {
        case .human: Console.print(Render.human(value))
        case .typedJSON: Console.print(value.typedJSON())
        case .openStep: Console.print(value.literalText)
        case .json: Console.print(try Render.json(value, readable: true, file: file, hint: " (use --typed-json)"))
        case .xml:
            do {
                Console.write(try value.encodedBytes(as: .xml))
            } catch {
                throw .failure(error.inFile(file).description)
            }
        }
    }
}

/// `settings convert xml1|binary1|json FILE... [-r] [-o OUT | -e EXT]`, like `plutil -convert`.
enum ConvertCommand: Command {
    static let name = "convert"
    static let summary = "convert plist files to xml1, binary1 or json (like plutil -convert)"
    static let usage = """
        usage: settings convert xml1|binary1|json [-r] [-o OUT | -e EXT] FILE...
               settings -convert FORMAT ...          (plutil -convert)

        Reads each FILE (XML, binary, JSON, typed JSON or OpenStep text) and rewrites it as FORMAT:
          xml1 (or xml)        an XML plist, laid out like Apple's tools
          binary1 (or binary)  a binary bplist00
          json                 plain JSON on one line, as plutil writes it (-r: indented); a plist
                               holding dates or data is refused, naming the key path
        Replaces FILE atomically, keeping its permissions and owner, unless -o OUT (one FILE;
        '-' writes to standard output) or -e EXT (FILE with its extension replaced by EXT).
        A FILE the Settings library manages is converted under its lock and kept in its
        history, and stays a property list (json is refused there).
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let args = try PlutilArguments(arguments, command: name, allowed: ["-o", "-e", "-r", "-s"])
        guard let formatName = args.positional.first else { throw .usage("convert: expected FORMAT and FILE") }
        let files = Array(args.positional.dropFirst())
        guard !files.isEmpty else { throw .usage("convert: expected FORMAT and FILE") }
        if args.output != nil && files.count > 1 { throw .usage("convert: -o takes one FILE") }
        if args.output != nil && args.outputExtension != nil { throw .usage("convert: use -o or -e, not both") }
        let format: PlistFormat?
        switch formatName {
        case "xml1", "xml": format = .xml
        case "binary1", "binary": format = .binary
        case "json": format = nil
        default: throw .usage("convert: unknown format '\(formatName)' (use xml1, binary1 or json)")
        }
        for file in files {
            if target(for: file, args) == file, let domain = Domain.managing(file: file) {
                // A file the Settings library manages changes format under its lock, kept in its history.
                guard let format else {
                    throw .failure("\(file): the Settings library manages this file, and it must stay a property list; not converted to JSON (use -o OUT)")
                }
                try domain.edit(creating: false, format: format) { _ in }
                continue
            }
            let value = try Input(file: file).value
            let bytes: [UInt8]
            if let format {
                do {
                    bytes = try value.encodedBytes(as: format)
                } catch {
                    throw .failure(error.inFile(file).description)
                }
            } else {
                bytes = Array((try Render.json(value, readable: args.readable, file: file) + "\n").utf8)
            }
            try Output(target(for: file, args)).write(bytes)
            if file == files.last { ProcessExit.keepUntilExit(value) }
        }
    }

    /// Where the result of converting `file` goes.
    static func target(for file: String, _ args: PlutilArguments) -> String {
        if let output = args.output { return output }
        guard let ext = args.outputExtension else { return file }
        let name = PlistFile.name(of: file)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return file + "." + ext }
        return String(file.dropLast(name.distance(from: dot, to: name.endIndex))) + "." + ext
    }
}

/// `settings lint [-s] [--strict] FILE...`, like `plutil -lint`.
enum LintCommand: Command {
    static let name = "lint"
    static let summary = "check that plist files parse (like plutil -lint)"
    static let usage = """
        usage: settings lint [-s] [--strict] [--schema SCHEMA] FILE...
               settings -lint [-s] FILE...           (plutil -lint)

        Checks each FILE (XML, binary, JSON, typed JSON or OpenStep text). Prints `FILE: OK` for
        a good file (-s: nothing), and for a bad one the error as `FILE:LINE:COL: message` (text)
        or `FILE: byte N: message` (binary), on standard error. Exits 1 when any file fails.
        XML <date> text with fields out of range and <data> that is not well-formed base64 are
        read as CoreFoundation reads them, and reported as `FILE:LINE:COL: warning: ...`;
        --strict makes them failures. --schema SCHEMA (a JSON Schema file, such as the one
        `settings schema APP` prints) also checks each file's values against it and reports each
        one that does not fit as `FILE: key 'K': VALUE does not fit RULE`.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let args = try PlutilArguments(arguments, command: name, allowed: ["-s", "--strict", "--schema"])
        guard !args.positional.isEmpty else { throw .usage("lint: expected at least one FILE") }
        let schema = try args.schema.map { path throws(CLIError) in try SchemaFile.read(path) }
        var failed = 0
        for file in args.positional {
            do {
                let bytes = file == "-" ? try Console.readStandardInput() : try Files.read(file)
                let input = try Input(parsing: bytes, name: file == "-" ? "<stdin>" : file)
                let warnings = input.syntax == .xml ? Strict.warnings(xml: bytes) : []
                for w in warnings {
                    Console.print("\(file):\(w.line):\(w.column): \(args.strict ? "error" : "warning"): \(w.message)".escapingControlCharacters, to: .error)
                }
                let violations = schema?.schema.violations(of: input.value) ?? []
                for v in violations { Console.print("\(file): \(v)".escapingControlCharacters, to: .error) }
                if (args.strict && !warnings.isEmpty) || !violations.isEmpty {
                    failed += 1
                } else if !args.silent {
                    Console.print("\(file): OK")
                }
            } catch {
                Console.print(error.message.escapingControlCharacters, to: .error)
                failed += 1
            }
        }
        if failed > 0 { throw .silentFailure }
    }
}

/// `settings extract KEYPATH FORMAT FILE`, like `plutil -extract`.
enum ExtractCommand: Command {
    static let name = "extract"
    static let summary = "print the value at a dotted key path (like plutil -extract)"
    static let usage = """
        usage: settings extract KEYPATH xml1|binary1|json|raw [-r] [-n] [-expect TYPE] [-o OUT] FILE
               settings -extract KEYPATH FORMAT ... FILE     (plutil -extract)

        Prints the value at KEYPATH (plutil's syntax: keys and array indexes separated by '.',
        '\\.' for a dot inside a key) in FORMAT: a plist, JSON (-r: indented), or raw: a string as
        it is, numbers, true/false, dates in ISO 8601, data in base64, an array's count, a
        dictionary's keys one per line (-n: no newline after it).
        Without -o the result goes to standard output (plutil replaces FILE). -expect TYPE exits
        1 unless the value has that type (see `settings type`).
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let args = try PlutilArguments(arguments, command: name, allowed: ["-o", "-r", "-n", "-expect", "-s"])
        guard args.positional.count == 3 else { throw .usage("extract: expected KEYPATH FORMAT FILE") }
        let (keyPath, formatName, file) = (DottedKeyPath(args.positional[0]), args.positional[1], args.positional[2])
        let value = try namingFile(file) { () throws(CLIError) in try keyPath.value(in: Input(file: file).value) }
        if let expected = args.expect, expected != value.plutilTypeName {
            throw .failure("\(file): the value at key path '\(keyPath.text)' is \(value.plutilTypeName), expected \(expected)")
        }
        let bytes: [UInt8]
        switch formatName {
        case "xml1", "xml", "binary1", "binary":
            do {
                bytes = try value.encodedBytes(as: formatName.hasPrefix("xml") ? .xml : .binary)
            } catch {
                throw .failure(error.inFile(file).description)
            }
        case "json":
            bytes = Array((try Render.json(value, readable: args.readable, file: file) + "\n").utf8)
        case "raw":
            let text: String
            switch value {
            case .string(let s): text = s
            case .bool(let b): text = b ? "true" : "false"
            case .date: text = value.description
            case .data(let d): text = d.base64EncodedString()
            case .real(let r) where r == 0 && r.sign == .minus: text = "-0"  // reads back as -0.0, as "0" would not
            case .integer, .real: text = value.displayText
            case .array(let items): text = String(items.count)                 // as plutil: the count
            case .dictionary(let dict): text = dict.keys.joined(separator: "\n")  // as plutil: each key on a line
            case .uid:
                throw .failure("\(file): the value at key path '\(keyPath.text)' is \(value.kindWithArticle); raw has no form for it (use xml1 or json)")
            }
            bytes = Array((args.noNewline ? text : text + "\n").utf8)
        default:
            throw .usage("extract: unknown format '\(formatName)' (use xml1, binary1, json or raw)")
        }
        try Output(args.output ?? "-").write(bytes)
    }
}

/// `settings type KEYPATH FILE`, like `plutil -type`.
enum TypeCommand: Command {
    static let name = "type"
    static let summary = "print the type of the value at a dotted key path (like plutil -type)"
    static let usage = """
        usage: settings type KEYPATH [-expect TYPE] FILE
               settings -type KEYPATH FILE           (plutil -type)

        Prints the type of the value at KEYPATH: dictionary, array, string, integer, float, bool,
        date or data. -expect TYPE exits 1 unless it is that type.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let args = try PlutilArguments(arguments, command: name, allowed: ["-expect"])
        guard args.positional.count == 2 else { throw .usage("type: expected KEYPATH FILE") }
        let keyPath = DottedKeyPath(args.positional[0]), file = args.positional[1]
        try KeyPath.checkDepth(keyPath.components.count)
        let value = try namingFile(file) { () throws(CLIError) in try keyPath.value(in: Input(file: file).value) }
        if let expected = args.expect, expected != value.plutilTypeName {
            throw .failure("\(file): the value at key path '\(keyPath.text)' is \(value.plutilTypeName), expected \(expected)")
        }
        Console.write(Array((args.noNewline ? value.plutilTypeName : value.plutilTypeName + "\n").utf8))
    }
}

/// `settings create FORMAT FILE`, like `plutil -create`: an empty dictionary.
enum CreateCommand: Command {
    static let name = "create"
    static let summary = "write an empty plist (a dictionary) in a format (like plutil -create)"
    static let usage = """
        usage: settings create xml1|binary1|json FILE
               settings -create FORMAT FILE                  (plutil -create)

        Writes an empty dictionary to FILE ('-' for standard output) in FORMAT, replacing FILE
        atomically when it exists (as plutil does). A FILE the Settings library manages is emptied
        as `settings reset` empties it (locked, kept in its history first); json is refused there.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let args = try PlutilArguments(arguments, command: name, allowed: [])
        guard args.positional.count == 2 else { throw .usage("create: expected FORMAT FILE") }
        let empty = PlistValue.dictionary(PlistDictionary())
        let bytes: [UInt8]
        switch args.positional[0] {
        case "xml1", "xml", "binary1", "binary":
            do {
                bytes = try empty.encodedBytes(as: args.positional[0].hasPrefix("xml") ? .xml : .binary)
            } catch {
                throw .failure(error.description)
            }
        case "json": bytes = Array("{}".utf8)
        default: throw .usage("create: unknown format '\(args.positional[0])' (use xml1, binary1 or json)")
        }
        try Output(args.positional[1]).write(bytes)
    }
}

/// `settings insert|replace|remove KEYPATH ... FILE`, like `plutil -insert`, `-replace`, `-remove`.
enum EditCommand {
    static let typeList = "-bool YES|NO, -integer N, -float N, -string TEXT, -date ISO8601, -data BASE64, -xml PLIST, -json JSON, -array, -dictionary"

    static func run(_ edit: DottedKeyPath.Edit, command: String, _ arguments: [String]) throws(CLIError) {
        var allowed: Set<String> = ["-o", "-r", "-s"]
        if edit != .remove { allowed.insert("TYPE") }
        if edit == .insert { allowed.insert("-append") }
        let args = try PlutilArguments(arguments, command: command, allowed: allowed)
        guard args.positional.count == 2 else {
            throw .usage(edit == .remove ? "remove: expected KEYPATH FILE" : "\(command): expected KEYPATH -TYPE VALUE FILE")
        }
        let keyPath = DottedKeyPath(args.positional[0]), file = args.positional[1]
        try KeyPath.checkDepth(keyPath.components.count)
        let value = edit == .remove ? nil : try args.typedValue(command: command, keyPath: keyPath.text, file: file)
        if args.output == nil || args.output == file, let domain = Domain.managing(file: file) {
            // A file the Settings library manages is changed as `write` changes it: under its
            // lock, from its contents then, checked against its schema, kept in its history.
            return try domain.edit(creating: false) { contents throws(CLIError) in
                var root = PlistValue.dictionary(contents)
                let appends = args.append && KeySuggestion.value(at: keyPath.components, in: root) != nil
                try namingFile(file) { () throws(CLIError) in try keyPath.apply(appends ? .append : edit, value, to: &root) }
                contents = try Domain.dictionary(root, path: file)
            }
        }
        let input = try Input(file: file)
        var root = input.value
        // -append on a key path with nothing there inserts the value there, as plutil does.
        let appends = args.append && KeySuggestion.value(at: keyPath.components, in: root) != nil
        try namingFile(file) { () throws(CLIError) in try keyPath.apply(appends ? .append : edit, value, to: &root) }
        let bytes: [UInt8]
        switch input.syntax {
        case .json:
            bytes = Array((try Render.json(root, readable: args.readable, file: file) + "\n").utf8)
        case .typedJSON:
            bytes = Array((root.typedJSON() + "\n").utf8)
        case .xml, .binary, .openStep:
            do {
                bytes = try root.encodedBytes(as: input.syntax == .binary ? .binary : .xml)
            } catch {
                throw .failure(error.inFile(file).description)
            }
        }
        try Output(args.output ?? file).write(bytes)
    }
}

/// `settings insert`.
enum InsertCommand: Command {
    static let name = "insert"
    static let summary = "insert a value at a dotted key path (like plutil -insert)"
    static let usage = """
        usage: settings insert KEYPATH -TYPE VALUE [-append] [-o OUT] FILE
               settings -insert KEYPATH -TYPE VALUE FILE     (plutil -insert)

        Inserts the value at KEYPATH (keys and array indexes separated by '.'); exits 1 when a
        value is already there (use replace). An array index inserts before that element; with
        -append, KEYPATH names an array and the value is appended (with nothing at KEYPATH, the
        value is inserted there, as plutil does). Types: \(EditCommand.typeList).
        FILE is rewritten in its format (OpenStep text becomes XML) atomically, keeping its
        permissions and owner, unless -o OUT ('-' for standard output). A FILE that does not
        parse is refused and left as it is. A FILE the Settings library manages (an application's
        settings file, or one with .NAME.lock or .NAME.meta beside it) is changed as `settings
        write` changes it: under the library's lock, checked against its schema, kept in its history.
        """

    static func run(_ arguments: [String]) throws(CLIError) { try EditCommand.run(.insert, command: name, arguments) }
}

/// `settings replace`.
enum ReplaceCommand: Command {
    static let name = "replace"
    static let summary = "set the value at a dotted key path (like plutil -replace)"
    static let usage = """
        usage: settings replace KEYPATH -TYPE VALUE [-o OUT] FILE
               settings -replace KEYPATH -TYPE VALUE FILE    (plutil -replace)

        Sets the value at KEYPATH, whether or not one is there (the containers on the way must
        exist). Types: \(EditCommand.typeList). FILE is rewritten as insert rewrites it.
        """

    static func run(_ arguments: [String]) throws(CLIError) { try EditCommand.run(.replace, command: name, arguments) }
}

/// `settings remove`.
enum RemoveCommand: Command {
    static let name = "remove"
    static let summary = "remove the value at a dotted key path (like plutil -remove)"
    static let usage = """
        usage: settings remove KEYPATH [-o OUT] FILE
               settings -remove KEYPATH FILE         (plutil -remove)

        Removes the value at KEYPATH; exits 1 when there is none. FILE is rewritten as insert
        rewrites it.
        """

    static func run(_ arguments: [String]) throws(CLIError) { try EditCommand.run(.remove, command: name, arguments) }
}

/// Runs `body`, prefixing a failure's message with the file's name.
func namingFile<T>(_ file: String, _ body: () throws(CLIError) -> T) throws(CLIError) -> T {
    do {
        return try body()
    } catch {
        guard error.status == .failure, !error.message.hasPrefix(file + ":"), !error.message.hasPrefix("<stdin>") else { throw error }
        throw .failure("\(file): \(error.message)")
    }
}

/// What the tool leaves for the end of the process to reclaim.
enum ProcessExit {
    /// Keeps `value` alive until the process exits. `convert` returns to `exit` right after its
    /// last file, and freeing a large decoded tree first (a release and a `free` per node) is
    /// about an eighth of a whole conversion; the kernel takes the pages back at once.
    static func keepUntilExit(_ value: PlistValue) {
        _ = Unmanaged.passRetained(Kept(value))
    }

    private final class Kept: Sendable {
        let value: PlistValue
        init(_ value: PlistValue) { self.value = value }
    }
}
