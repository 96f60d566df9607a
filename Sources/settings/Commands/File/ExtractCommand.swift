#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

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
