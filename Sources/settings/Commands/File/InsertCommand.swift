#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

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
