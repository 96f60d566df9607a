import SettingsPlist

/// `settings lint FILE...`, like `plutil -lint`.
enum LintCommand: Command {
    static let name = "lint"
    static let summary = "check that plist files parse (like plutil -lint)"
    static let usage = """
        usage: settings lint FILE...

        Checks each FILE (XML, binary or typed JSON). Prints `FILE: OK` for a good file, and for a
        bad one the error as `FILE:LINE:COL: message` (XML and JSON) or `FILE: byte N: message`
        (binary), on standard error. Exits 1 when any file fails.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let files = try plainArguments(arguments, command: name)
        guard !files.isEmpty else { throw .usage("lint: expected at least one FILE") }
        var failed = 0
        for file in files {
            do {
                _ = try readValue(file)
                Console.print("\(file): OK")
            } catch {
                Console.print(error.message, to: .error)
                failed += 1
            }
        }
        if failed > 0 { throw .silentFailure }
    }
}

/// `settings diff A B`: the key paths added, removed and changed.
enum DiffCommand: Command {
    static let name = "diff"
    static let summary = "list the key paths added, removed and changed between two plists"
    static let usage = """
        usage: settings diff A B

        Compares two plist files (or DOMAINs) key path by key path, nested dictionaries included:
          + KEY = VALUE        in B only
          - KEY = VALUE        in A only
          ~ KEY: OLD -> NEW    in both, different
        Values are printed in the OpenStep syntax; arrays compare as wholes. Exits 0 when they are
        equal, 1 when they differ (like diff) or a file cannot be read.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 2 else { throw .usage("diff: expected A B") }
        let (a, b) = shown(try Domain(positional[0]).contentsOrValue(), try Domain(positional[1]).contentsOrValue())
        var lines: [String] = []
        compare(a, b, prefix: [], into: &lines)
        for line in lines { Console.print(line) }
        if !lines.isEmpty { throw .silentFailure }
    }

    static func compare(_ a: PlistValue, _ b: PlistValue, prefix: [String], into lines: inout [String]) {
        guard case .dictionary(let left) = a, case .dictionary(let right) = b else {
            if a != b { lines.append("~ \(label(prefix)): \(text(a)) -> \(text(b))") }
            return
        }
        for (key, value) in left {
            if let other = right[key] {
                compare(value, other, prefix: prefix + [key], into: &lines)
            } else {
                lines.append("- \(label(prefix + [key])) = \(text(value))")
            }
        }
        for (key, value) in right where left[key] == nil {
            lines.append("+ \(label(prefix + [key])) = \(text(value))")
        }
    }

    private static func label(_ path: [String]) -> String {
        path.isEmpty ? "(root)" : path.map { $0.replacing("\\", with: "\\\\").replacing("/", with: "\\/") }.joined(separator: "/")
    }

    private static func text(_ value: PlistValue) -> String {
        value.literalText.split(separator: "\n").map { $0.trimmingPrefix(" ") }.joined(separator: " ")
    }
}

extension Domain {
    /// The file's whole value (any root), for comparisons.
    func contentsOrValue() throws(CLIError) -> PlistValue {
        try readValue(path)
    }
}
