#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SettingsPlist
import SettingsFiles
import Synchronization

// The volatile layer's two outside sources: NSUserDefaults-style `-key value` command-line
// arguments and `PREFIX_KEY=value` environment variables. Both only ever write the volatile layer,
// which is never saved.

nonisolated extension SettingsStore {
    /// Reads `-key value` pairs from command-line arguments into the volatile layer, as
    /// NSUserDefaults fills its argument domain.
    ///
    /// ```swift
    /// // myapp -timeout 5 -Network/proxy "{ host = example.com; port = 8080; }" -name '"42"'
    /// store.applyArguments()
    /// store["timeout"]                   // .integer(5)
    /// store["Network/proxy/port"]        // .integer(8080)
    /// store["name"]                      // .string("42"): quotes keep a number a string
    /// store.source(of: "timeout")        // .volatile
    /// ```
    ///
    /// Which arguments count:
    /// - the first argument is the program's name and is skipped; `--` ends the options (nothing
    ///   after it is read);
    /// - a key is an argument of a single `-` followed by something that is not a digit and not
    ///   `.digit`: `-timeout`, `-Network/timeout` (`/` separates namespaces, `\/` is a literal
    ///   slash, see ``SettingsKey``). So `-5` and `-.5` (negative numbers), `--flag` (GNU-style
    ///   options), a lone `-` and positional arguments are skipped silently;
    /// - the argument after a key is its value, unless it is itself a key or starts with `--`.
    ///   A key without a value (last, or followed by another key) is an
    ///   ``SettingsDiagnostic/Kind/invalidOverride`` diagnostic, as is a key with an empty
    ///   component (`-a//b`). A key given twice keeps its last value.
    ///
    /// Values are read by ``volatileValue(parsing:existing:)``: literals like `(a, b)` and
    /// `{ k = v; }`, bare numbers and Booleans typed, the rest plain strings.
    ///
    /// - Parameter arguments: the program's arguments, name first (default: this process's).
    /// - Returns: the diagnostics; each is also sent to ``SettingsDiagnostics/handler``. A program
    ///   with single-dash flags of its own (`-v`) should pass only the arguments meant for settings.
    @discardableResult
    public func applyArguments(_ arguments: [String] = CommandLine.arguments) -> [SettingsDiagnostic] {
        var assignments: [(source: String, key: SettingsKey, text: String)] = []
        var diagnostics: [SettingsDiagnostic] = []
        var i = 1
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "--" { break }
            guard Self.isArgumentKey(argument) else {
                i += 1
                continue
            }
            let key = SettingsKey(String(argument.dropFirst()))
            let hasValue = i + 1 < arguments.count && !Self.isArgumentKey(arguments[i + 1]) && !arguments[i + 1].hasPrefix("--")
            guard hasValue else {
                diagnostics.append(SettingsDiagnostic(.invalidOverride, key: key, "command-line argument \(argument) has no value; ignored"))
                i += 1
                continue
            }
            if key.components.contains(where: \.isEmpty) {
                diagnostics.append(SettingsDiagnostic(.invalidOverride, key: key, "command-line argument \(argument) names an empty key component; ignored"))
            } else {
                assignments.append((argument, key, arguments[i + 1]))
            }
            i += 2
        }
        diagnostics += applyVolatile(assignments, describedAs: "command-line argument")
        diagnostics.forEach(report)
        return diagnostics
    }

    /// Reads `PREFIX_KEY=value` environment variables into the volatile layer.
    ///
    /// ```swift
    /// // MYAPP_TIMEOUT=5 MYAPP_NETWORK__PROXY__HOST=example.com MYAPP_AUTO_PLAY=yes myapp
    /// store.register(defaults: ["timeout": 30, "autoPlay": false, "Network": ["Proxy": ["host": ""]]])
    /// store.applyEnvironment(prefix: "MYAPP")
    /// store["timeout"]                 // .integer(5)
    /// store["Network/Proxy/host"]      // .string("example.com")
    /// store["autoPlay"]                // .bool(true)
    /// ```
    ///
    /// How a variable's name becomes a key:
    /// - only names starting with `prefix` + `_` count (exact case; a prefix that already ends in
    ///   `_` is used as it is); the rest of the name is the key;
    /// - `__` (two underscores) separates namespaces: `NETWORK__PROXY__HOST` is
    ///   `NETWORK` / `PROXY` / `HOST`, read left to right;
    /// - each component is matched against the keys that already exist at that level in any layer
    ///   (registered defaults, override files, the user file, volatile values): the same text
    ///   first, else the same text ignoring letter case (`TIMEOUT` -> `timeout`), else the same
    ///   letters and digits ignoring case and `_`, `-`, `.` (`AUTO_PLAY` -> `autoPlay`,
    ///   `auto-play`). With no match the text is kept as it is; with two different matches in the
    ///   best tier the variable is ambiguous: an ``SettingsDiagnostic/Kind/invalidOverride``
    ///   diagnostic, and it is ignored. Register defaults first so that keys can be found;
    /// - variables are applied in name order; two that name the same key are reported, and the
    ///   later name wins.
    ///
    /// Values are read as for arguments, by ``volatileValue(parsing:existing:)``.
    ///
    /// - Parameters:
    ///   - prefix: the application's prefix, e.g. `"MYAPP"`.
    ///   - environment: the variables (default: this process's).
    /// - Returns: the diagnostics; each is also sent to ``SettingsDiagnostics/handler``.
    @discardableResult
    public func applyEnvironment(prefix: String, _ environment: [String: String] = ProcessInfo.processInfo.environment) -> [SettingsDiagnostic] {
        let lead = prefix.hasSuffix("_") ? prefix : prefix + "_"
        let recorded = String(lead.dropLast())
        if values.storage.locked({ $0.sources.recordEnvironmentPrefix(recorded) }) { layersManifestChanged() }
        var diagnostics: [SettingsDiagnostic] = []
        var assignments: [(source: String, key: SettingsKey, text: String)] = []
        var namedBy: [SettingsKey: String] = [:]
        for name in environment.keys.sorted() where name.hasPrefix(lead) {
            guard let text = environment[name] else { continue }
            let parts = Self.splitEnvironmentName(name.dropFirst(lead.count))
            guard !parts.contains(where: \.isEmpty) else {
                diagnostics.append(SettingsDiagnostic(.invalidOverride, "environment variable \(name) names an empty key component; ignored"))
                continue
            }
            let resolved = withState { s in s.matchKey(parts, pending: assignments.map(\.key)) }
            switch resolved {
            case .failure(let ambiguity):
                diagnostics.append(SettingsDiagnostic(
                    .invalidOverride,
                    "environment variable \(name) could mean '\(ambiguity.candidates.joined(separator: "' or '"))' (at \(ambiguity.level)); ignored"))
            case .success(let key):
                if let earlier = namedBy[key] {
                    diagnostics.append(SettingsDiagnostic(.invalidOverride, key: key, "environment variables \(earlier) and \(name) both set '\(key)'; using \(name)"))
                }
                namedBy[key] = name
                assignments.append((name, key, text))
            }
        }
        diagnostics += applyVolatile(assignments, describedAs: "environment variable")
        diagnostics.forEach(report)
        return diagnostics
    }

    /// The value a command-line argument or environment variable stands for.
    ///
    /// ```swift
    /// SettingsStore.volatileValue(parsing: "5").value            // .integer(5)
    /// SettingsStore.volatileValue(parsing: "(a, 2)").value       // ["a", 2]
    /// SettingsStore.volatileValue(parsing: "\"5\"").value        // .string("5")
    /// SettingsStore.volatileValue(parsing: "(a, b").problem      // the PlistError; value is the text
    /// ```
    ///
    /// The rules, as typed as possible so that `@Setting`s of any type can read the result:
    /// 1. text whose first non-blank character is `(`, `{`, `<`, `"` or `'` is read as a plist
    ///    literal (`PlistValue(literal:options:inferringTypes:)` with types
    ///    inferred, so `(1, 2)` is two integers); text that is not a valid literal is kept as a
    ///    plain string, as NSUserDefaults does, and the parse error is returned with it;
    /// 2. otherwise a bare number or Boolean is typed by
    ///    `PlistValue.inferredScalar(_:)`: `5` -> integer, `1.5` -> real,
    ///    `YES`/`no`/`true`/`False` -> bool; except that when `existing` (the value already in
    ///    the layers) is a string the text stays a string, and when it is a Bool `1` and `0`
    ///    read as `true` and `false`;
    /// 3. anything else is the text as it is (spaces kept): `-title "Hello world"`.
    ///
    /// - Parameters:
    ///   - text: the argument or variable value.
    ///   - existing: the key's current effective value, if any.
    /// - Returns: the value, and the literal's parse error when rule 1 fell back to a string.
    public static func volatileValue(parsing text: String, existing: PlistValue? = nil) -> (value: PlistValue, problem: PlistError?) {
        if let first = text.unicodeScalars.first(where: { !$0.properties.isWhitespace }),
           "({<\"'".unicodeScalars.contains(first) {
            do {
                return (try PlistValue(literal: text, inferringTypes: true), nil)
            } catch {
                return (.string(text), error)
            }
        }
        guard let typed = PlistValue.inferredScalar(text) else { return (.string(text), nil) }
        switch (existing, typed) {
        case (.string?, _):
            return (.string(text), nil)
        case (.bool?, .integer(let n)) where n == 0 || n == 1:
            return (.bool(n == 1), nil)
        default:
            return (typed, nil)
        }
    }

    // MARK: Helpers

    /// `-x...` where `x` is neither `-`, a digit, nor `.` followed by a digit.
    static func isArgumentKey(_ argument: String) -> Bool {
        var scalars = argument.unicodeScalars.makeIterator()
        guard scalars.next() == "-", let second = scalars.next() else { return false }
        if second == "-" || ("0"..."9").contains(second) { return false }
        if second == ".", let third = scalars.next(), ("0"..."9").contains(third) { return false }
        return true
    }

    /// `A__B__C` -> `["A", "B", "C"]` (see `EnvironmentName.components(_:)`).
    static func splitEnvironmentName(_ name: Substring) -> [String] {
        EnvironmentName.components(name)
    }

    /// Parses and writes assignments to the volatile layer under one lock, bumping the
    /// generation once. Returns the diagnostics for literals that fell back to strings.
    func applyVolatile(_ assignments: [(source: String, key: SettingsKey, text: String)], describedAs kind: String) -> [SettingsDiagnostic] {
        guard !assignments.isEmpty else { return [] }
        var diagnostics: [SettingsDiagnostic] = []
        replace(.volatile, origin: .volatile) { s in
            for (source, key, text) in assignments {
                if let refusal = key.refusal(toStore: nil, sizeLimit: nil) {
                    diagnostics.append(SettingsDiagnostic(.writeRefused, key: key, "\(kind) \(source): \(refusal); ignored"))
                    continue
                }
                // The type hint comes from the layers below: an earlier volatile value is no declaration.
                var existing: PlistValue?
                for layer in [SettingsLayer.overrides, .user, .defaults] where existing == nil {
                    existing = s[layer].value(at: key.components)
                }
                let (value, problem) = Self.volatileValue(parsing: text, existing: existing)
                if let problem {
                    diagnostics.append(SettingsDiagnostic(
                        .invalidOverride, key: key,
                        "\(kind) \(source): value is not a valid property-list literal (\(problem)); using it as a string"))
                }
                if let refusal = key.refusal(toStore: value, sizeLimit: nil) {
                    diagnostics.append(SettingsDiagnostic(.writeRefused, key: key, "\(kind) \(source): \(refusal); ignored"))
                    continue
                }
                s.modify(.volatile) { _ = $0.setValue(value, at: key.components[...]) }
                s.sources.volatile[key] = "\(kind) \(source)"
            }
        }
        moveRenamedKeys(in: .volatile, overwriting: true)
        return diagnostics
    }
}

/// Two or more existing keys an environment variable's component could mean.
struct KeyAmbiguity: Error {
    /// The namespace where it happened (`top level` or a key path).
    let level: String
    let candidates: [String]
}

extension SettingsStore.State {
    /// The key an environment variable's components name, matched against existing keys level by
    /// level (see ``SettingsStore/applyEnvironment(prefix:_:)``). `pending` keys (from earlier
    /// variables of the same call, not yet written) count as existing.
    func matchKey(_ parts: [String], pending: [SettingsKey]) -> Result<SettingsKey, KeyAmbiguity> {
        var resolved: [String] = []
        for part in parts {
            var candidates: [String] = []
            for layer in SettingsLayer.allCases {
                let container = resolved.isEmpty ? PlistValue.dictionary(self[layer]) : self[layer].value(at: resolved)
                if case .dictionary(let dict)? = container { candidates += dict.keys }
            }
            for key in pending where key.components.count > resolved.count && Array(key.components.prefix(resolved.count)) == resolved {
                candidates.append(key.components[resolved.count])
            }
            switch Self.bestMatch(for: part, among: candidates) {
            case .failure(let ambiguous):
                let level = resolved.isEmpty ? "top level" : "'\(SettingsKey(components: resolved))'"
                return .failure(KeyAmbiguity(level: level, candidates: ambiguous.names))
            case .success(let name):
                resolved.append(name ?? part)
            }
        }
        return .success(SettingsKey(components: resolved))
    }

    /// Exact text, else case-insensitive, else letters and digits only; `nil` when nothing
    /// matches; the distinct names when the best tier holds more than one.
    static func bestMatch(for part: String, among candidates: [String]) -> Result<String?, AmbiguousNames> {
        if candidates.contains(where: { $0.unicodeScalars.elementsEqual(part.unicodeScalars) }) { return .success(part) }
        let tiers: [(String) -> String] = [
            { $0.lowercased() },
            { EnvironmentName.loose($0) },
        ]
        for normalize in tiers {
            let wanted = normalize(part)
            var found: [String] = []
            for name in candidates where normalize(name) == wanted && !found.contains(where: { $0.unicodeScalars.elementsEqual(name.unicodeScalars) }) {
                found.append(name)
            }
            if found.count == 1 { return .success(found[0]) }
            if found.count > 1 { return .failure(AmbiguousNames(names: found)) }
        }
        return .success(nil)
    }
}

/// The names that matched a component equally well.
struct AmbiguousNames: Error {
    let names: [String]
}
