#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

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
