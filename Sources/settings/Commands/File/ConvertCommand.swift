#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

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
