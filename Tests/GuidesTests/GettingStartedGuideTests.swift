import Foundation
import Settings
import SettingsTestSupport
import Testing

/// Docs/GettingStarted.md: its samples run as written, and the whole guide done as a reader does
/// it, in a new package.
extension GuideSuites {
@Suite("Guide: Getting started")
struct GettingStartedGuideTests {
    // MARK: - The samples, as written

    /// The guide's `Defaults.plist` (its first `xml` block).
    static func defaultsPlist() throws -> String {
        let markdown = try String(contentsOf: root.appending(path: "Docs/GettingStarted.md"), encoding: .utf8)
        return try #require(blocks("xml", in: markdown).first)
    }

    @Test func samplesRunAsWritten() async throws {
        let defaults = try Self.defaultsPlist()
        let run = try await GuideRun.run(setUp: { try $0.write("Defaults.plist", defaults) }) {
            for sample in samplesOfGettingStarted { try await sample() }
        }
        for line in ["1 setting(s) without a default", "autoPlay: true, timeout: 30.0 (from defaults)", "timeout now 45.0 (from user)"] {
            #expect(run.printed.contains(line + "\n"), "\(run.printed)")
        }
        #expect(run.warned.contains("warning: setting 'Network/proxy' (String?, AppSettings.proxy) has no default in code or in Defaults.plist"), "\(run.warned)")
        #expect(run.shared?["Network"]?["timeout"] == 45.0)   // "durable now"
    }

    // MARK: - The whole guide, in a new package
    // Docs/GettingStarted.md, done as a reader does it: its first shell block run as it is (the real
    // `swift package init`, then the guide's own clean-up of what init generated), its `Package.swift`,
    // `Defaults.plist` and `main.swift` copied as they are beside a `Settings` folder (a link to this
    // checkout: the package resolves by path, nothing is fetched), built and run twice with a
    // configuration folder of its own.

    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Whether a `swift` executable is on `PATH`: the only reason the walk is skipped.
    static let swiftOnPath: Bool = (ProcessInfo.processInfo.environment["PATH"] ?? "")
        .split(separator: ":")
        .contains { FileManager.default.isExecutableFile(atPath: "\($0)/swift") }

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
        let run = try runProgram(URL(filePath: "/usr/bin/env"), arguments, environment: environment, in: directory)
        return (run.status, run.output)
    }

    // A whole package build on a busy machine (the Settings library from scratch, a few minutes
    // on 2 cores): the limit is only for a build that hangs.
    @Test(.enabled(if: swiftOnPath, "swift is not on PATH: the guide's walk needs `swift package init` and `swift build`"),
          .timeLimit(.minutes(30)))
    func theGuidesProgramBuildsAndRunsAsCopied() throws {
        let markdown = try String(contentsOf: Self.root.appending(path: "Docs/GettingStarted.md"), encoding: .utf8)
        let swift = Self.blocks("swift", in: markdown)
        let manifest = try #require(swift.first { $0.hasPrefix("// swift-tools-version") })
        let program = try #require(swift.first { $0.contains("struct AppSettings") })
        let defaults = try #require(Self.blocks("xml", in: markdown).first)
        let create = try #require(Self.blocks("sh", in: markdown).first)
        #expect(create.contains("swift package init --type executable --name MyApp"))
        #expect(manifest.contains(#".package(path: "../Settings")"#))

        let temporary = try TemporaryDirectory()
        let work = temporary.url
        let package = work.appending(path: "MyApp")
        let config = work.appending(path: "config")
        let environment = ["XDG_CONFIG_HOME": config.path]
        // Step 1 exactly as written: mkdir, the real `swift package init`, the guide's clean-up.
        let (created, createLog) = try Self.run(["sh", "-e", "-c", create], in: work, environment: environment)
        try #require(created == 0, "the guide's first shell block failed:\n\(createLog)")
        #expect(FileManager.default.fileExists(atPath: package.appending(path: ".gitignore").path), "not made by swift package init")
        #expect(try FileManager.default.contentsOfDirectory(atPath: package.appending(path: "Sources/MyApp").path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: package.appending(path: "Tests").path))
        // The checkout beside the package, as the guide has it: ../Settings (a link to this one).
        try FileManager.default.createSymbolicLink(at: work.appending(path: "Settings"), withDestinationURL: Self.root)
        try Data(manifest.utf8).write(to: package.appending(path: "Package.swift"))
        try Data(defaults.utf8).write(to: package.appending(path: "Defaults.plist"))
        try Data(program.utf8).write(to: package.appending(path: "Sources/MyApp/main.swift"))

        let (built, buildLog) = try Self.run(["swift", "build"], in: package, environment: environment)
        #expect(built == 0, "swift build failed:\n\(buildLog)")
        guard built == 0 else { return }
        let (first, firstOutput) = try Self.run(["swift", "run", "--skip-build", "MyApp"], in: package, environment: environment)
        #expect(first == 0, "\(firstOutput)")
        // The warning once, after the program's name (the guide shows this output).
        let warning = "MyApp: warning: setting 'Network/proxy' (String?, AppSettings.proxy) has no default in code or in Defaults.plist"
        #expect(firstOutput.split(separator: "\n").filter { $0.contains("warning") } == [Substring(warning)], "\(firstOutput)")
        #expect(firstOutput.contains("1 setting(s) without a default"))
        #expect(firstOutput.contains("autoPlay: true, timeout: 30.0 (from defaults)"))
        #expect(firstOutput.contains("timeout now 45.0 (from user)"))
        for line in ["1 setting(s) without a default", "autoPlay: true, timeout: 30.0 (from defaults)", "timeout now 45.0 (from user)", warning] {
            #expect(markdown.contains("\n\(line)\n"), "the guide's sample output lacks: \(line)")
        }
        let (second, secondOutput) = try Self.run(["swift", "run", "--skip-build", "MyApp"], in: package, environment: environment)
        #expect(second == 0, "\(secondOutput)")
        #expect(secondOutput.contains("timeout: 45.0 (from user)"))
        #expect(secondOutput.contains("timeout now 60.0 (from user)"))
        #expect(FileManager.default.fileExists(atPath: config.appending(path: "MyApp/settings.plist").path))
    }
}
}
