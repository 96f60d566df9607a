#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles
import Synchronization

/// `settings explain DOMAIN KEY [--json]`: every layer's value for KEY, top to bottom, as the
/// program that keeps DOMAIN sees them (it names its files and renamed keys in `layers.plist`
/// beside its settings file), and which one wins.
enum ExplainCommand: Command {
    static let name = "explain"
    static let summary = "show every layer's value for a key and which one wins"
    static let usage = """
        usage: settings explain DOMAIN KEY [--json]

        Shows where KEY's value comes from, top to bottom: an administrator's lock
        (locked.plist in a system directory: "locked by FILE"), environment variables
        (PREFIX_KEY, when the program reads them), override files, the user's file, system
        defaults (settings.plist in each $XDG_CONFIG_DIRS directory, /etc/xdg when unset),
        defaults files; '*' marks the value that wins. The program that keeps DOMAIN names its files, its
        environment prefix and its renamed keys in layers.plist, in the .settings.plist.meta
        directory beside its file; without one, only the user's file is shown. Command-line
        arguments and values set in code exist only inside the program (SettingsStore.explain
        shows them). A renamed key is found under its old names; an old name is explained as
        the key it became.
          --json  the same as a JSON object: key, value, layer, source, rows (layer, source,
                  value, wins, notes), formerly
        Values under secret-named keys print as <redacted>; --show-secrets prints them.
        Exits 1 when DOMAIN or a file it names cannot be read.
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let json = arguments.contains("--json")
        let positional = try plainArguments(arguments.filter { $0 != "--json" }, command: name)
        guard positional.count == 2 else { throw .usage("explain: expected DOMAIN KEY") }
        let domain = try Domain(positional[0])
        var key = try KeyPath(positional[1])
        // Another user's companion directory is not read (a warning says so).
        let companion = Domain.Companion(beside: try Files.target(of: domain.path).path, path: domain.path,
                                         without: "explained from the user's file only")
        let manifest = companion.isUsable ? try LayersManifest.read(for: domain) : nil
        if let current = manifest?.currentName(of: key.path) {
            Console.error("'\(key.path)' was renamed to '\(current)'; explaining '\(current)'")
            key = try KeyPath(current)
        }
        var report = try explanation(of: key, in: domain, manifest: manifest)
        // Secret when the key, or a name it had, is named like one or the schema marks it.
        let marks = SecretMarks.of(domain)
        let names = [key.components] + report.formerly.compactMap { try? KeyPath($0).components }
        for index in report.rows.indices {
            report.rows[index].value = report.rows[index].value.map { marks.shown($0, at: names) }
        }
        if json {
            Console.print(report.jsonText)
        } else {
            Console.print(report.escapingControlCharacters.text(showingSecrets: true))
        }
    }

    /// The report for `key`: the layers `manifest` names, read from their files.
    static func explanation(of key: KeyPath, in domain: Domain, manifest: PlistLayersManifest?) throws(CLIError) -> SettingsExplanation {
        let formerly = try (manifest?.formerNames(of: key.path) ?? []).map { (text) throws(CLIError) in try KeyPath(text) }
        let system = domain.administratorFiles()  // hook (locks, system defaults)
        var rows = system.rows(for: key.components, locks: true)
        if let prefix = manifest?.environmentPrefix {
            rows.append(environmentRow(for: [key] + formerly, prefix: prefix))
        }
        let overrides = manifest?.overrideFiles ?? []
        for file in overrides.reversed() {
            rows.append(try row(layer: "overrides", file: file, contents: try Domain.dictionary(Input(file: file).value, path: file), key: key, formerly: formerly))
        }
        var userRow = try row(layer: "user", file: domain.path, contents: try domain.existingContents() ?? [:], key: key, formerly: formerly)
        if userRow.value != nil, let line = provenanceLine(forKey: key.components, inFile: domain.path) { userRow.notes.append(line) }
        rows.append(userRow)
        rows += system.rows(for: key.components, locks: false)
        for file in (manifest?.defaultsFiles ?? []).reversed() {
            rows.append(try row(layer: "defaults", file: file, contents: try Domain.registeredDefaults(at: file), key: key, formerly: formerly))
        }
        var report = SettingsExplanation(key: key.path, rows: rows, formerly: formerly.map(\.path))
        if report.winner == nil, let contents = try domain.existingContents() {
            let hint = KeySuggestion.hint(for: key.path, components: key.components, in: .dictionary(contents), separator: "/")
            if !hint.isEmpty { report.missingReason = String(hint.dropFirst(2).dropLast()) }  // " (did you mean …?)"
        }
        return report
    }

    /// One file's row: its value under `key`, else under the first old name that has one.
    static func row(layer: String, file: String, contents: PlistDictionary, key: KeyPath, formerly: [KeyPath]) throws(CLIError) -> SettingsExplanation.Row {
        if let value = contents.value(at: key) { return .init(layer: layer, source: file, value: value) }
        for old in formerly {
            if let value = contents.value(at: old) {
                let moved = layer == "user" ? "; the program moves it at its next save" : ""
                return .init(layer: layer, source: file, value: value, notes: ["under its old name '\(old.path)'\(moved)"])
            }
        }
        return .init(layer: layer, source: file, value: nil)
    }

    /// The environment variable of this shell that would set `keys[0]` (or an old name), matched
    /// as the library matches it: `PREFIX_` then components separated by `__`, each compared
    /// ignoring case and `_`, `-`, `.`. The value is shown as the text it is.
    static func environmentRow(for keys: [KeyPath], prefix: String) -> SettingsExplanation.Row {
        let lead = prefix + "_"
        let variables = environmentVariables().filter { $0.name.hasPrefix(lead) }.sorted { $0.name < $1.name }
        for key in keys {
            let wanted = key.components.map(EnvironmentName.loose)
            for variable in variables.reversed() {
                let parts = EnvironmentName.components(variable.name.dropFirst(lead.count))
                guard parts.map(EnvironmentName.loose) == wanted else { continue }
                let notes = key.path == keys[0].path ? [] : ["under its old name '\(key.path)'"]
                return .init(layer: "volatile", source: "environment variable \(variable.name)", value: .string(variable.value), notes: notes)
            }
        }
        let name = lead + keys[0].components.map { $0.uppercased() }.joined(separator: "__")
        return .init(layer: "volatile", source: "environment variable \(name)", value: nil)
    }

    /// This process's environment.
    private static func environmentVariables() -> [(name: String, value: String)] {
        var variables: [(name: String, value: String)] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                variables.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            }
            entry += 1
        }
        return variables
    }
}

/// The provenance line for `key` in the file at `path` (after the link rule): who set it and
/// when, from the file's provenance log; `nil` when nothing can be said.
private func provenanceLine(forKey key: [String], inFile path: String) -> String? {
    guard let target = try? PlistFile.target(of: path).path else { return nil }
    return (try? SettingsProvenanceLog.describe(key: key, inFileAt: target)) ?? nil
}

extension SettingsExplanation {
    /// The report with control characters escaped in every name it prints (the key, sources,
    /// notes such as provenance lines with process names and device ids, old names), for the
    /// human text; values print in their literal form, which escapes them already.
    var escapingControlCharacters: SettingsExplanation {
        var copy = self
        copy.key = key.escapingControlCharacters
        for index in copy.rows.indices {
            copy.rows[index].layer = rows[index].layer.escapingControlCharacters
            copy.rows[index].source = rows[index].source.escapingControlCharacters
            copy.rows[index].notes = rows[index].notes.map(\.escapingControlCharacters)
        }
        copy.formerly = formerly.map(\.escapingControlCharacters)
        copy.rules = rules.map(\.escapingControlCharacters)
        copy.missingReason = missingReason?.escapingControlCharacters
        return copy
    }
}
