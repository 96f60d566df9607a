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
