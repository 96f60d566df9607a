#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// The arguments, refusing options (none of these commands has any).
func plainArguments(_ arguments: [String], command: String) throws(CLIError) -> [String] {
    if let option = arguments.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
        throw .usage("\(command): unknown option \(option)")
    }
    return arguments
}
