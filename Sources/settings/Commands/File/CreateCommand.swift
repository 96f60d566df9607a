#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

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
