#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The tool. A synchronous entry point: nothing here needs Swift concurrency's runtime to start.
@main
enum SettingsTool {
    static func main() {
        if let problem = invalidArgument() {
            Console.error(problem)
            exit(ExitStatus.usage.rawValue)
        }
        exit(run(Array(CommandLine.arguments.dropFirst())).rawValue)
    }

    /// The first argument that is not valid UTF-8, described, or `nil`. `CommandLine.arguments`
    /// has already replaced invalid bytes with U+FFFD, so `delete MyApp $'caf\xe8'` would act on
    /// a key the user did not name (or `write` would store text they did not give): the raw
    /// `argv` bytes are checked instead, and such an argument is refused.
    static func invalidArgument() -> String? {
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
                                            count: strlen(pointer))
            if let shown = escapedIfInvalidUTF8(bytes) {
                return "argument \(index) ('\(shown)') is not valid UTF-8: keys, values and names must be UTF-8 text"
            }
        }
        return nil
    }

    /// `bytes` with each byte that is not part of valid UTF-8 shown as `\xHH`, or `nil` when
    /// all of it is valid UTF-8.
    static func escapedIfInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var shown = ""
        var valid = true
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                shown.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                valid = false
                for byte in bytes[offset ..< offset + length] { shown += "\\x" + String(byte, radix: 16, uppercase: true) }
                offset += length
            case .emptyInput:
                return valid ? nil : shown
            }
        }
    }

    /// Every command, in the order `settings --help` lists them.
    static var commands: [any Command.Type] { [
        ReadCommand.self, ReadTypeCommand.self, WriteCommand.self, DeleteCommand.self, RenameCommand.self,
        KeysCommand.self, DomainsCommand.self, FindCommand.self, ImportCommand.self, ExportCommand.self,
        PrintCommand.self, ConvertCommand.self, LintCommand.self, ExtractCommand.self, TypeCommand.self,
        InsertCommand.self, ReplaceCommand.self, RemoveCommand.self, CreateCommand.self, DiffCommand.self,
        SchemaCommand.self,
        ExplainCommand.self, WritableCommand.self,
        HistoryCommand.self, RestoreCommand.self, ResetCommand.self,
        EditScreenCommand.self, CompletionCommand.self,
    ] }

    /// The command called `name`: a switch, so that starting one command instantiates no array
    /// of every command's metatype.
    static func lookup(_ name: String) -> (any Command.Type)? {
        switch name {
        case ReadCommand.name: ReadCommand.self
        case ReadTypeCommand.name: ReadTypeCommand.self
        case WriteCommand.name: WriteCommand.self
        case DeleteCommand.name: DeleteCommand.self
        case RenameCommand.name: RenameCommand.self
        case KeysCommand.name: KeysCommand.self
        case DomainsCommand.name: DomainsCommand.self
        case FindCommand.name: FindCommand.self
        case ImportCommand.name: ImportCommand.self
        case ExportCommand.name: ExportCommand.self
        case PrintCommand.name: PrintCommand.self
        case ConvertCommand.name: ConvertCommand.self
        case LintCommand.name: LintCommand.self
        case ExtractCommand.name: ExtractCommand.self
        case TypeCommand.name: TypeCommand.self
        case InsertCommand.name: InsertCommand.self
        case ReplaceCommand.name: ReplaceCommand.self
        case RemoveCommand.name: RemoveCommand.self
        case CreateCommand.name: CreateCommand.self
        case DiffCommand.name: DiffCommand.self
        case SchemaCommand.name: SchemaCommand.self
        case ExplainCommand.name: ExplainCommand.self
        case WritableCommand.name: WritableCommand.self
        case HistoryCommand.name: HistoryCommand.self
        case RestoreCommand.name: RestoreCommand.self
        case ResetCommand.name: ResetCommand.self
        case EditScreenCommand.name: EditScreenCommand.self
        case CompletionCommand.name: CompletionCommand.self
        default: nil
        }
    }

    /// `plutil`'s spellings: `settings -p FILE` runs `print -p FILE`, `settings -lint ...` runs `lint ...`.
    static var plutilForms: [String: (command: any Command.Type, arguments: [String])] { [
        "-p": (PrintCommand.self, ["-p"]),
        "-lint": (LintCommand.self, []),
        "-convert": (ConvertCommand.self, []),
        "-extract": (ExtractCommand.self, []),
        "-type": (TypeCommand.self, []),
        "-insert": (InsertCommand.self, []),
        "-replace": (ReplaceCommand.self, []),
        "-remove": (RemoveCommand.self, []),
        "-create": (CreateCommand.self, []),
    ] }

    /// The tool's own help text.
    static var usage: String {
        var lines = [
            "usage: settings COMMAND [ARGUMENTS]",
            "",
            "Reads, writes and converts property-list settings files, like defaults and plutil.",
            "",
            "commands:",
        ]
        for c in commands { lines.append("  " + c.name.padding(toLength: 10) + c.summary) }
        lines.append("")
        lines.append("plutil's forms work too: -p, -lint, -convert, -extract, -type, -insert, -replace, -remove, -create.")
        lines.append("Values under secret-named keys (password, token, apiKey...) print as <redacted> in")
        lines.append("read, print and diff; --show-secrets prints them.")
        lines.append("Run 'settings COMMAND --help' for a command's arguments; 'settings --version' for the version;")
        lines.append("'settings help --man' for all of it as a manual page.")
        return lines.joined(separator: "\n")
    }

    /// The package's version, as CHANGELOG.md names it.
    static let version = "0.1.0"

    /// Picks the command, runs it, and turns failures into exit statuses.
    static func run(_ arguments: [String]) -> ExitStatus {
        guard let first = arguments.first else {
            Console.print(usage, to: .error)
            return .usage
        }
        if first == "--help" || first == "-h" || first == "help" || first == "-help" {
            if arguments.dropFirst().first == "--man" {
                Console.print(ManPage.text)
                return .success
            }
            Console.print(usage)
            return .success
        }
        if first == "--version" || first == "version" {
            Console.print("settings \(version)")
            return .success
        }
        let command: any Command.Type
        var rest: [String]
        if let named = lookup(first) {
            command = named
            rest = Array(arguments.dropFirst())
        } else if first.hasPrefix("-"), let index = arguments.firstIndex(where: { plutilForms[$0] != nil }),
                  let form = plutilForms[arguments[index]] {
            // plutil takes options before the command too: `plutil -s -lint FILE`.
            command = form.command
            rest = form.arguments + arguments[..<index] + arguments[(index + 1)...]
        } else {
            Console.error("unknown command '\(first)'; run 'settings --help'")
            return .usage
        }
        rest = takingShowSecrets(rest)
        if rest.contains("--help") || rest.contains("-h") || rest.contains("-help") {
            Console.print(command.usage)
            return .success
        }
        do {
            try command.run(rest)
            return .success
        } catch {
            if !error.message.isEmpty { Console.error(error.message) }
            if error.status == .usage && error.hintsHelp { Console.print("Run 'settings \(command.name) --help' for usage.", to: .error) }
            return error.status
        }
    }
}
