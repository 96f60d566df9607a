#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Entry point: picks the command, runs it, and turns failures into exit statuses.
func runTool(_ arguments: [String]) -> ExitStatus {
    guard let name = arguments.first else {
        Console.print(toolUsage, to: .error)
        return .usage
    }
    if name == "--help" || name == "-h" || name == "help" {
        Console.print(toolUsage)
        return .success
    }
    guard let command = commands.first(where: { $0.name == name }) else {
        Console.error("unknown command '\(name)'; run 'settings --help'")
        return .usage
    }
    let rest = takingShowSecrets(Array(arguments.dropFirst()))
    if rest.contains("--help") || rest.contains("-h") {
        Console.print(command.usage)
        return .success
    }
    do {
        try command.run(rest)
        return .success
    } catch {
        if !error.message.isEmpty { Console.error(error.message) }
        if error.status == .usage { Console.print("Run 'settings \(name) --help' for usage.", to: .error) }
        return error.status
    }
}

exit(runTool(Array(CommandLine.arguments.dropFirst())).rawValue)
