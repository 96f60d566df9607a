import SettingsPlist

/// `settings print [--xml | --json | --typed-json] FILE`: shows a plist in another form.
enum PrintCommand: Command {
    static let name = "print"
    static let summary = "print a plist file as XML, JSON or canonical typed JSON"
    static let usage = """
        usage: settings print [--xml | --json | --typed-json] FILE

        Prints FILE (XML, binary or typed JSON plist, detected; '-' reads standard input).
          --xml          as an XML plist (the default)
          --json         as plain JSON, like plutil -convert json (dates and data have no JSON
                         form: refused, naming the key path; use --typed-json for them)
          --typed-json   as canonical typed JSON: {"dict": [["key", {"int": 1}], ...]}
        Exits 1 with a one-line error naming the file and position when FILE is malformed.
        """

    enum Style { case xml, json, typedJSON }

    static func run(_ arguments: [String]) throws(CLIError) {
        var style = Style.xml
        var files: [String] = []
        for arg in arguments {
            switch arg {
            case "--xml": style = .xml
            case "--typed-json": style = .typedJSON
            case "--json": style = .json
            case _ where arg.hasPrefix("-") && arg != "-": throw .usage("print: unknown option \(arg)")
            default: files.append(arg)
            }
        }
        guard files.count == 1, let file = files.first else { throw .usage("print: expected one FILE") }
        let value = shown(file == "-" ? try parseInput(readStandardInput(), name: "<stdin>") : try readValue(file))
        switch style {
        case .typedJSON:
            Console.print(value.typedJSON())
        case .json:
            do {
                Console.print(try value.jsonText())
            } catch {
                throw .failure("\(file): key '\(error.codingPath ?? "")': \(error.message) (use --typed-json)")
            }
        case .xml:
            do {
                Console.write(try value.encodedBytes(as: .xml))
            } catch {
                throw .failure(error.inFile(file).description)
            }
        }
    }
}
