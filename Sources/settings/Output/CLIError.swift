#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure that ends the command with a one-line message on standard error.
struct CLIError: Error {
    var status: ExitStatus
    var message: String
    /// Whether a usage error is followed by "Run 'settings COMMAND --help' for usage.".
    var hintsHelp = true

    static func usage(_ message: String) -> CLIError { CLIError(status: .usage, message: message) }
    /// Trouble that is not a usage error but exits 2, for commands whose 1 means something else
    /// (`diff`: 1 is "different", so a file that cannot be read is 2, as Unix `diff` has it).
    static func trouble(_ message: String) -> CLIError { CLIError(status: .usage, message: message, hintsHelp: false) }
    /// A failure already reported on standard error (lint, diff).
    static var silentFailure: CLIError { CLIError(status: .failure, message: "") }
    static func failure(_ message: String) -> CLIError { CLIError(status: .failure, message: message) }
}

/// Runs `body`, prefixing a failure's message with the file's name.
func namingFile<T>(_ file: String, _ body: () throws(CLIError) -> T) throws(CLIError) -> T {
    do {
        return try body()
    } catch {
        guard error.status == .failure, !error.message.hasPrefix(file + ":"), !error.message.hasPrefix("<stdin>") else { throw error }
        throw .failure("\(file): \(error.message)")
    }
}
