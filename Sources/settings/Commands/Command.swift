#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A subcommand of `settings`.
protocol Command {
    /// The name typed on the command line.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The full `--help` text.
    static var usage: String { get }
    /// Runs with the arguments after the command name.
    static func run(_ arguments: [String]) throws(CLIError)
}
