#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

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
