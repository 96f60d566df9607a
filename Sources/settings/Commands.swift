import SettingsPlist

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

/// Every command, in the order `settings --help` lists them.
var commands: [any Command.Type] {
    [ReadCommand.self, WriteCommand.self, DeleteCommand.self, KeysCommand.self, ImportCommand.self, ExportCommand.self,
     PrintCommand.self, ConvertCommand.self, LintCommand.self, DiffCommand.self]
}

/// The tool's own help text.
var toolUsage: String {
    var lines = [
        "usage: settings COMMAND [ARGUMENTS]",
        "",
        "Reads, writes and converts property-list settings files.",
        "",
        "commands:",
    ]
    for c in commands { lines.append("  " + c.name.padding(toLength: 10) + c.summary) }
    lines.append("")
    lines.append("Run 'settings COMMAND --help' for a command's arguments.")
    return lines.joined(separator: "\n")
}

extension String {
    func padding(toLength n: Int) -> String {
        count >= n ? self + " " : self + String(repeating: " ", count: n - count)
    }
}
