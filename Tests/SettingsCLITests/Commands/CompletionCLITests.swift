import Foundation
import SettingsTestSupport
import Testing

/// `settings completion bash|zsh|fish` (issue 31, item 7): each script completes commands,
/// options and the domains on this machine, asking the tool for the domains when it completes
/// (a domain made after the script was printed completes too). Each shell's script is run by
/// that shell where it is installed (bash always is here; zsh and fish where present).
struct CompletionCLITests {
    /// A config home with the domains `MyApp` and `Other App`, and the tool on a `PATH` as `settings`.
    struct Fixture {
        let dir: TemporaryDirectory
        var home: String { dir.path("config") }
        var bin: String { dir.path("bin") }
        var environment: [String: String] {
            ["XDG_CONFIG_HOME": home, "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        }

        init() throws {
            dir = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: bin + "/settings", withDestinationPath: CLI.executable.path)
            for name in ["MyApp", "Other App"] { try addDomain(name) }
        }

        func addDomain(_ name: String) throws {
            try FileManager.default.createDirectory(atPath: home + "/" + name, withIntermediateDirectories: true)
            #expect(try CLI.run(["create", "xml1", home + "/" + name + "/settings.plist"], environment: [:]).status == 0)
        }

        func script(_ shell: String) throws -> String {
            let out = try CLI.run(["completion", shell], environment: environment)
            #expect(out.status == 0, "\(out.stderr)")
            let url = dir.url.appending(path: "completion." + shell)
            try out.stdout.write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }

        func shell(_ name: String) -> URL? {
            ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { URL(filePath: $0 + name) }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        }
    }

    // MARK: bash

    /// Runs bash's completion function on `line` (the last word is the one completed) and
    /// returns the candidates.
    func bash(_ f: Fixture, _ script: String, _ line: [String]) throws -> [String] {
        let words = line.map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
        let program = """
            source '\(script)'
            COMP_WORDS=(\(words)); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
            _settings
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let out = try CLI.launch(try #require(f.shell("bash")), ["--norc", "-c", program], environment: f.environment, in: f.dir.url)
        #expect(out.status == 0, "\(out.stderr)")
        return out.stdout.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsAndDomains() throws {
        let f = try Fixture()
        let script = try f.script("bash")
        #expect(try bash(f, script, ["settings", "re"]) == ["read", "read-type", "rename", "replace", "remove", "restore", "reset"])
        #expect(try bash(f, script, ["settings", "-con"]) == ["-convert"])
        #expect(try bash(f, script, ["settings", "print", "--t"]) == ["--typed-json"])
        #expect(try bash(f, script, ["settings", "-insert", "k", "-b"]) == ["-bool"])
        #expect(try bash(f, script, ["settings", "convert", "xm"]) == ["xml1"])
        #expect(try bash(f, script, ["settings", "read", "O"]) == ["Other App"])
        #expect(try bash(f, script, ["settings", "write", "--show-secrets", "M"]) == ["MyApp"])
        // Only a DOMAIN argument completes domains: a KEY after it does not.
        #expect(try bash(f, script, ["settings", "read", "MyApp", "M"]) == [])
        // Asked at completion time: a domain made after the script was printed completes too.
        try f.addDomain("Later")
        #expect(try bash(f, script, ["settings", "history", "L"]) == ["Later"])
        #expect(!(try String(contentsOfFile: script, encoding: .utf8)).contains("Other App"))
    }

    /// Every command `settings --help` lists, and every option its own help names, is offered.
    @Test func bashOffersEveryCommandAndItsOptions() throws {
        let f = try Fixture()
        let script = try f.script("bash")
        let help = try CLI.run("--help").stdout
        let commands = help.split(separator: "\n").filter { $0.hasPrefix("  ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(commands.count >= 26)
        #expect(Set(try bash(f, script, ["settings", ""])).isSuperset(of: commands))
        let exportOptions = try bash(f, script, ["settings", "export", "-"])
        #expect(exportOptions.contains("--binary") && exportOptions.contains("--help"))
        let extractOptions = try bash(f, script, ["settings", "extract", "-"])
        #expect(Set(extractOptions).isSuperset(of: ["-r", "-n", "-expect", "-o"]))
    }

    // MARK: zsh

    @Test func zshCompletesCommandsOptionsAndDomains() throws {
        let f = try Fixture()
        guard let zsh = f.shell("zsh") else { return }  // not installed here: bash's test covers the logic
        let script = try f.script("zsh")
        // compsys's builtins replaced by ones that print what they are given.
        func complete(_ line: [String]) throws -> [String] {
            let words = line.map { "'" + $0 + "'" }.joined(separator: " ")
            let program = """
                _describe() { print -l -- ${(P)${@[-1]}} }
                compadd() { [[ $1 == -- ]] && shift; print -l -- "$@" }
                _files() { print -- '<files>' }
                compdef() { : }
                source '\(script)'
                words=(\(words)); CURRENT=$#words; PREFIX=$words[-1]
                _settings
                """
            let out = try CLI.launch(zsh, ["-f", "-c", program], environment: f.environment, in: f.dir.url)
            #expect(out.status == 0, "\(out.stderr)")
            return out.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["settings", ""]).contains("read-type:print the type of a key (like defaults read-type)"))
        #expect(try complete(["settings", "print", "--"]).contains("--typed-json"))
        try f.addDomain("Later")
        #expect(try complete(["settings", "read", ""]) == ["Later", "MyApp", "Other App", "<files>"])
        #expect(try complete(["settings", "read", "MyApp", ""]) == ["<files>"])
    }

    // MARK: fish

    @Test func fishCompletesCommandsOptionsAndDomains() throws {
        let f = try Fixture()
        guard let fish = f.shell("fish") else { return }  // not installed here: bash's test covers the logic
        let script = try f.script("fish")
        func complete(_ line: String) throws -> [String] {
            let out = try CLI.launch(fish, ["--no-config", "-c", "source '\(script)'; complete -C '\(line)'"], environment: f.environment, in: f.dir.url)
            #expect(out.status == 0, "\(out.stderr)")
            return out.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
        }
        #expect(try complete("settings read-t") == ["read-type"])
        #expect(try complete("settings print --t") == ["--typed-json"])
        try f.addDomain("Later")
        #expect(try complete("settings reset L") == ["Later"])
        #expect(try complete("settings read O") == ["Other App"])
    }

    @Test func unknownShellIsAUsageError() throws {
        let out = try CLI.run("completion", "tcsh")
        #expect(out.status == 2)
        #expect(out.stderr.contains("unknown shell 'tcsh' (use bash, zsh or fish)"))
    }
}
