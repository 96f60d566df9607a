import Foundation
import SettingsTestSupport
import Testing

/// Docs/GettingStarted.md, done as a reader does it: its `Package.swift`, `Defaults.plist` and
/// `main.swift` copied as they are into a new package beside a `Settings` folder (a link to this
/// checkout), built and run twice with a configuration folder of its own.
struct GettingStartedRunsTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The guide's fenced blocks of `language`, in order.
    static func blocks(_ language: String, in markdown: String) -> [String] {
        var out: [String] = [], current: [Substring]? = nil
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```\(language)" {
                current = []
            } else if current != nil, line == "```" {
                out.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return out
    }

    /// Runs `arguments` in `directory`, returning the exit status and everything it printed.
    static func run(_ arguments: [String], in directory: URL, environment: [String: String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    // A whole package build on a busy machine: the limit is only for a build that hangs.
    @Test(.timeLimit(.minutes(30))) func theGuidesProgramBuildsAndRunsAsCopied() throws {
        let markdown = try String(contentsOf: Self.root.appending(path: "Docs/GettingStarted.md"), encoding: .utf8)
        let swift = Self.blocks("swift", in: markdown)
        let manifest = try #require(swift.first { $0.hasPrefix("// swift-tools-version") })
        let program = try #require(swift.first { $0.contains("struct AppSettings") })
        let defaults = try #require(Self.blocks("xml", in: markdown).first)
        #expect(manifest.contains(#".package(path: "../Settings")"#))

        let temporary = try TemporaryDirectory()
        let work = temporary.url
        let package = work.appending(path: "MyApp")
        try FileManager.default.createDirectory(at: package.appending(path: "Sources/MyApp"), withIntermediateDirectories: true)
        // The checkout beside the package, as the guide has it: ../Settings (a link to this one).
        try FileManager.default.createSymbolicLink(at: work.appending(path: "Settings"), withDestinationURL: Self.root)
        try Data(manifest.utf8).write(to: package.appending(path: "Package.swift"))
        try Data(defaults.utf8).write(to: package.appending(path: "Defaults.plist"))
        try Data(program.utf8).write(to: package.appending(path: "Sources/MyApp/main.swift"))
        let config = work.appending(path: "config")
        let environment = ["XDG_CONFIG_HOME": config.path]

        let (built, buildLog) = try Self.run(["swift", "build"], in: package, environment: environment)
        #expect(built == 0, "swift build failed:\n\(buildLog)")
        guard built == 0 else { return }
        let (first, firstOutput) = try Self.run(["swift", "run", "--skip-build", "MyApp"], in: package, environment: environment)
        #expect(first == 0, "\(firstOutput)")
        #expect(firstOutput.contains("warning: "))
        #expect(firstOutput.contains("Network/proxy"))
        #expect(firstOutput.contains("autoPlay: true, timeout: 30.0 (from defaults)"))
        #expect(firstOutput.contains("timeout now 45.0 (from user)"))
        let (second, secondOutput) = try Self.run(["swift", "run", "--skip-build", "MyApp"], in: package, environment: environment)
        #expect(second == 0, "\(secondOutput)")
        #expect(secondOutput.contains("timeout: 45.0 (from user)"))
        #expect(secondOutput.contains("timeout now 60.0 (from user)"))
        #expect(FileManager.default.fileExists(atPath: config.appending(path: "MyApp/settings.plist").path))
    }
}
