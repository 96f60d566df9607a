#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

/// `settings convert xml1|binary1|json IN [-o OUT]`: rewrites a plist in another format, like `plutil -convert`.
enum ConvertCommand: Command {
    static let name = "convert"
    static let summary = "convert a plist file to xml1, binary1 or json"
    static let usage = """
        usage: settings convert xml1|binary1|json IN [-o OUT]

        Reads IN (XML, binary or typed JSON, detected) and writes it as FORMAT:
          xml1 (or xml)        an XML plist, laid out like Apple's tools
          binary1 (or binary)  a binary bplist00
          json                 plain JSON, as plutil writes it: a plist holding dates or data is
                               refused, naming the key path
        Writes OUT atomically; without -o, IN is replaced.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        var positional: [String] = []
        var output: String?
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg == "-o" {
                guard i + 1 < arguments.count else { throw .usage("convert: -o needs a file") }
                output = arguments[i + 1]
                i += 2
                continue
            }
            if arg.hasPrefix("-") && arg != "-" { throw .usage("convert: unknown option \(arg)") }
            positional.append(arg)
            i += 1
        }
        guard positional.count == 2 else { throw .usage("convert: expected FORMAT and IN") }
        let format: PlistFormat
        switch positional[0] {
        case "xml1", "xml": format = .xml
        case "binary1", "binary": format = .binary
        case "json":
            let input = positional[1]
            let value = try readValue(input)
            do {
                try writeFile(Data((try value.jsonText() + "\n").utf8), to: output ?? input)
            } catch let error as PlistError {
                throw .failure("\(input): key '\(error.codingPath ?? "")': \(error.message)")
            } catch let error as CLIError {
                throw error
            } catch {
                throw .failure("\(input): \(error)")
            }
            return
        default: throw .usage("convert: unknown format '\(positional[0])' (use xml1, binary1 or json)")
        }
        let input = positional[1]
        let target = output ?? input
        let value = try readValue(input)
        do {
            try writeFile(try value.encoded(as: format), to: target)
        } catch let error as PlistError {
            throw .failure(error.inFile(input).description)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(target): \(error)")
        }
    }
}
