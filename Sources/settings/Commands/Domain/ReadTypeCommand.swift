#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings read-type DOMAIN KEY`, like `defaults read-type`.
enum ReadTypeCommand: Command {
    static let name = "read-type"
    static let summary = "print the type of a key (like defaults read-type)"
    static let usage = """
        usage: settings read-type DOMAIN KEY

        Prints "Type is T", T one of string, integer, float, boolean, date, data, array,
        dictionary (defaults' names). Exits 1 when the domain or KEY does not exist.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 2 else { throw .usage("read-type: expected DOMAIN KEY") }
        let domain = try Domain(positional[0])
        let key = try KeyPath(positional[1])
        let contents = try domain.contents()
        guard let value = contents.value(at: key) else { throw domain.noValue(key, in: contents) }
        Console.print("Type is \(value.defaultsTypeName)")
    }
}
