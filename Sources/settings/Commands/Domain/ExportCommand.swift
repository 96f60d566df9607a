#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// `settings export DOMAIN FILE`, like `defaults export`.
enum ExportCommand: Command {
    static let name = "export"
    static let summary = "write a domain to a plist file (like defaults export)"
    static let usage = """
        usage: settings export DOMAIN FILE [--binary]

        Writes the domain's keys to FILE as an XML plist (binary with --binary), atomically,
        keeping an existing FILE's permissions and owner; '-' writes to standard output.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        var binary = false
        var positional: [String] = []
        for arg in arguments {
            if arg == "--binary" { binary = true } else if arg.hasPrefix("-") && arg != "-" { throw .usage("export: unknown option \(arg)") } else { positional.append(arg) }
        }
        guard positional.count == 2 else { throw .usage("export: expected DOMAIN FILE") }
        let domain = try Domain(positional[0])
        let contents = try domain.contents()
        let bytes: [UInt8]
        do {
            bytes = try PlistValue.dictionary(contents).encodedBytes(as: binary ? .binary : .xml)
        } catch {
            throw .failure(error.inFile(domain.path).description)
        }
        try Output(positional[1]).write(bytes)
    }
}
