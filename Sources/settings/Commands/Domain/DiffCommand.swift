import SettingsPlist

/// `settings diff A B`: the key paths added, removed and changed.
enum DiffCommand: Command {
    static let name = "diff"
    static let summary = "list the key paths added, removed and changed between two plists"
    static let usage = """
        usage: settings diff A B

        Compares two plist files (or DOMAINs) key path by key path, nested dictionaries included:
          + KEY = VALUE        in B only
          - KEY = VALUE        in A only
          ~ KEY: OLD -> NEW    in both, different; when the types differ each side names its
                               type: ~ port: 1 (integer) -> 1.0 (real)
        Values are printed on one line (OpenStep-like; reals with a point, Booleans true/false);
        arrays compare as wholes. Values under secret-named keys show as <redacted> (a changed
        one as <redacted (changed)>) unless --show-secrets is given. An argument is a file when it contains '/', ends in .plist,
        .bplist or .json, or names an existing file; otherwise an application domain. Exits 0
        when they are equal, 1 when they differ, 2 when a file cannot be read or the arguments
        are wrong (as Unix diff does).
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 2 else { throw .usage("diff: expected A B") }
        let left: PlistValue, right: PlistValue
        do {
            left = try Input(file: try Domain(positional[0]).path).value
            right = try Input(file: try Domain(positional[1]).path).value
        } catch {
            throw error.status == .usage ? error : .trouble(error.message)
        }
        let (a, b) = shown(left, right)
        var lines: [String] = []
        compare(a, b, prefix: [], into: &lines)
        for line in lines { Console.print(line) }
        if !lines.isEmpty { throw .silentFailure }
    }

    static func compare(_ a: PlistValue, _ b: PlistValue, prefix: [String], into lines: inout [String]) {
        guard case .dictionary(let left) = a, case .dictionary(let right) = b else {
            guard a != b else { return }
            var old = Render.oneLine(a), new = Render.oneLine(b)
            if old == new && a.typeName == b.typeName {
                (old, new) = (a.typedJSON(), b.typedJSON())  // differences no text shows (-0.0, Unicode forms)
            }
            if a.typeName != b.typeName {
                old += " (\(a.typeName == "dict" ? "dictionary" : a.typeName))"
                new += " (\(b.typeName == "dict" ? "dictionary" : b.typeName))"
            }
            lines.append("~ \(label(prefix)): \(old) -> \(new)")
            return
        }
        for (key, value) in left {
            if let other = right[key] {
                compare(value, other, prefix: prefix + [key], into: &lines)
            } else {
                lines.append("- \(label(prefix + [key])) = \(Render.oneLine(value))")
            }
        }
        for (key, value) in right where left[key] == nil {
            lines.append("+ \(label(prefix + [key])) = \(Render.oneLine(value))")
        }
    }

    private static func label(_ path: [String]) -> String {
        path.isEmpty ? "(root)" : KeyPath(components: path).path.escapingControlCharacters
    }
}
