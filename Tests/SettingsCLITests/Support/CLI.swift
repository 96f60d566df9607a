import Foundation
import SettingsTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `settings` binary as a subprocess.
struct CLI {
    typealias Output = ProgramOutput

    /// The `settings` executable beside the test bundle (SwiftPM builds every product for `swift test`),
    /// or `$SETTINGS_CLI` (to run the tests against another build, e.g. an older one).
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["SETTINGS_CLI"], !path.isEmpty { return URL(filePath: path) }
        return builtProduct("settings")
    }

    static func run(_ arguments: String...) throws -> Output {
        try run(arguments, environment: [:])
    }

    static func run(_ arguments: [String], environment: [String: String], in directory: URL? = nil) throws -> Output {
        try launch(executable, arguments, environment: environment, in: directory)
    }

    /// Runs `program` with `arguments` and the test's environment plus `environment`; returns
    /// its status and both outputs.
    static func launch(_ program: URL, _ arguments: [String], environment: [String: String], in directory: URL? = nil) throws -> Output {
        try runProgram(program, arguments, environment: environment, in: directory)
    }
}

extension CLI {
    /// Runs the tool as an unprivileged user (through `setpriv` when the tests run as root, where
    /// permission bits do not apply), so "permission denied" can happen.
    static func runUnprivileged(_ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        guard geteuid() == 0 else { return try run(arguments, environment: environment) }
        return try launch(URL(filePath: "/usr/bin/setpriv"),
                          ["--reuid=65534", "--regid=65534", "--clear-groups", executable.path] + arguments,
                          environment: environment)
    }
}

extension CLI {
    /// Runs the tool with an environment (for domains resolved by application name).
    static func run(environment: [String: String], _ arguments: String...) throws -> Output {
        try run(arguments, environment: environment)
    }
}
