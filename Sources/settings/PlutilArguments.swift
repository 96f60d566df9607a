#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist

/// `plutil`-style arguments: options may come anywhere, `--` ends them.
struct PlutilArguments {
    var positional: [String] = []
    /// `-o PATH` (`-` is standard output).
    var output: String?
    /// `-e EXT`: write beside the input with this extension.
    var outputExtension: String?
    /// `-r`: readable JSON.
    var readable = false
    /// `-n`: no newline after raw output (extract raw, type).
    var noNewline = false
    /// `-s`: silent on success.
    var silent = false
    /// `--strict` (lint).
    var strict = false
    /// `--schema SCHEMA` (lint): a JSON Schema every file must fit.
    var schema: String?
    /// `-append` (insert).
    var append = false
    /// `-expect TYPE` (extract, type).
    var expect: String?
    /// A type flag and its value (insert, replace).
    var typed: (flag: String, value: String?)?

    /// Options every command here takes (`-o`, `-r` ...) are accepted only where listed in `allowed`.
    init(_ arguments: [String], command: String, allowed: Set<String>) throws(CLIError) {
        var i = 0
        var optionsEnded = false
        func next(_ option: String) throws(CLIError) -> String {
            guard i + 1 < arguments.count else { throw .usage("\(command): \(option) needs a value") }
            i += 1
            return arguments[i]
        }
        while i < arguments.count {
            let arg = arguments[i]
            defer { i += 1 }
            if optionsEnded || !arg.hasPrefix("-") || arg == "-" {
                positional.append(arg)
                continue
            }
            if arg == "--" {
                optionsEnded = true
                continue
            }
            // -s and -n are taken by every plutil verb, as plutil takes them (where they change
            // nothing, they are accepted and ignored, as there).
            guard allowed.contains(arg) || arg == "-s" || arg == "-n" || (allowed.contains("TYPE") && Self.typeFlags.contains(arg)) else {
                throw .usage("\(command): unknown option \(arg)")
            }
            switch arg {
            case "-o": output = try next(arg)
            case "-e": outputExtension = try next(arg)
            case "-r": readable = true
            case "-n": noNewline = true
            case "-s": silent = true
            case "--strict": strict = true
            case "--schema": schema = try next(arg)
            case "-append": append = true
            case "-expect": expect = try next(arg)
            case "-array", "-dictionary", "-dict":
                guard typed == nil else { throw .usage("\(command): more than one type given") }
                typed = (arg, nil)
            default:
                guard typed == nil else { throw .usage("\(command): more than one type given") }
                typed = (arg, try next(arg))
            }
        }
    }

    static let typeFlags: Set<String> = [
        "-bool", "-integer", "-int", "-float", "-string", "-date", "-data", "-xml", "-json", "-array", "-dictionary", "-dict",
    ]

    /// The value of a `plutil -insert`/`-replace` type flag: `-bool YES|NO`, `-integer N`,
    /// `-float N`, `-string TEXT`, `-date ISO8601`, `-data BASE64`, `-xml PLIST`, `-json JSON`,
    /// `-array` and `-dictionary` (empty). A value that does not parse is an error naming the
    /// file, the key path and the flag: `prefs.plist: insert at key path 'flag': "maybe" is not
    /// a valid -bool value (...)`.
    func typedValue(command: String, keyPath: String, file: String) throws(CLIError) -> PlistValue {
        guard let (flag, text) = typed else {
            throw .usage("\(command): expected a type and value (-bool, -integer, -float, -string, -date, -data, -xml, -json, -array or -dictionary)")
        }
        do {
            return try Self.value(of: flag, text ?? "")
        } catch {
            throw .failure("\(file): \(command) at key path '\(keyPath)': \(error.message)")
        }
    }

    /// The value `text` gives with the type flag `flag`, or an error saying why not (naming the flag).
    private static func value(of flag: String, _ value: String) throws(CLIError) -> PlistValue {
        switch flag {
        case "-array": return .array([])
        case "-dictionary", "-dict": return .dictionary(PlistDictionary())
        case "-data":
            guard let data = Data(base64Encoded: value, options: .ignoreUnknownCharacters), Strict.isBase64(Array(value.utf8)) else {
                throw .failure("-data: \"\(value)\" is not valid base64")
            }
            return .data(data)
        case "-xml":
            // XML (a fragment such as `<array>…</array>`, as plutil takes), never guessed: a
            // fragment starting `<a`, `<d` or `<f` would otherwise look like OpenStep data.
            do throws(PlistError) {
                return try Array(value.utf8).withUnsafeBufferPointer { buffer throws(PlistError) in try PlistValue.decodeBuffer(buffer) }
            } catch {
                throw .failure(error.inFile("-xml value").description)
            }
        case "-json":
            var reader = JSONReader(Array(value.utf8))
            do {
                return try reader.read()
            } catch {
                throw .failure("-json value: \(error)")
            }
        default:
            let name = flag == "-integer" ? "-int" : flag
            do {
                return try PlistValue.fromDefaultsArgument(type: name, [value])
            } catch {
                throw .failure(error.message)
            }
        }
    }
}

/// A `plutil` key path: dictionary keys and array indexes separated by `.` (`\.` for a dot
/// inside a key, `\\` for a backslash).
struct DottedKeyPath {
    let text: String
    let components: [String]

    init(_ text: String) {
        self.text = text
        self.components = EscapedPath.split(text, separator: ".")
    }

    /// How a value is put at the key path.
    enum Edit {
        /// `-insert`: the key must not exist yet (an array index inserts before it; the count appends).
        case insert
        /// `-insert ... -append`: appended to the array at the key path.
        case append
        /// `-replace`: set, whether or not the key exists (an array index must exist).
        case replace
        /// `-remove`.
        case remove
    }

    /// The value at the key path, or an error naming the first component not found (with a
    /// suggestion, see ``KeySuggestion``).
    func value(in root: PlistValue) throws(CLIError) -> PlistValue {
        guard let value = KeySuggestion.value(at: components, in: root) else {
            var found = 0
            while found < components.count, KeySuggestion.value(at: Array(components[...found]), in: root) != nil { found += 1 }
            throw notFound(upTo: min(found, components.count - 1), in: root)
        }
        return value
    }

    func notFound(upTo i: Int, in root: PlistValue? = nil) -> CLIError {
        // An index past an array's end says so, with the array's count (`tags.9` of 2 elements).
        if let root, let index = Int(components[i]),
           case .array(let items)? = i == 0 ? root : KeySuggestion.value(at: Array(components[..<i]), in: root) {
            let array = i == 0 ? "the top-level array" : "the array at '\(components[..<i].joined(separator: "."))'"
            return .failure("no value at key path '\(text)' (index \(index) is out of bounds: \(array) has \(items.count) element\(items.count == 1 ? "" : "s"))")
        }
        let hint = root.map { KeySuggestion.hint(for: text, components: components, in: $0, separator: ".") } ?? ""
        return .failure("no value at key path '\(text)' ('\(components[...i].joined(separator: "."))' not found)\(hint)")
    }

    /// Applies `edit` with `value` to `root`. Containers on the way must exist.
    func apply(_ edit: Edit, _ value: PlistValue?, to root: inout PlistValue) throws(CLIError) {
        let before = root
        do {
            try apply(edit, value, to: &root, at: 0)
        } catch {
            // A component not found: say so with a suggestion, from the document as it was.
            if error.message.hasPrefix("no value at key path"), let i = (0..<components.count).first(where: {
                KeySuggestion.value(at: Array(components[...$0]), in: before) == nil
            }) {
                throw notFound(upTo: i, in: before)
            }
            throw error
        }
    }

    private func apply(_ edit: Edit, _ value: PlistValue?, to node: inout PlistValue, at i: Int) throws(CLIError) {
        let component = components[i]
        let isLast = i == components.count - 1
        switch node {
        case .dictionary(var dict):
            if isLast && edit != .append {
                switch edit {
                case .insert:
                    guard dict[component] == nil else {
                        throw .failure("a value already exists at key path '\(text)' (use -replace)")
                    }
                    _ = dict.replaceValue(value, forKey: component)
                case .replace:
                    _ = dict.replaceValue(value, forKey: component)
                default:
                    guard dict.removeValue(forKey: component) != nil else { throw notFound(upTo: i) }
                }
            } else {
                guard var child = dict[component] else { throw notFound(upTo: i) }
                if isLast {
                    guard case .array(var items) = child, let value else {
                        throw .failure("-append: the value at key path '\(text)' is \(child.kindWithArticle), not an array")
                    }
                    items.append(value)
                    child = .array(items)
                } else {
                    try apply(edit, value, to: &child, at: i + 1)
                }
                _ = dict.replaceValue(child, forKey: component)
            }
            node = .dictionary(dict)
        case .array(var items):
            guard let index = Int(component), index >= 0 else { throw notFound(upTo: i) }
            if isLast && edit != .append {
                switch edit {
                case .insert:
                    guard index <= items.count, let value else { throw notFound(upTo: i) }
                    items.insert(value, at: index)
                case .replace:
                    guard let value, index <= items.count else { throw notFound(upTo: i) }
                    if index == items.count { items.append(value) } else { items[index] = value }
                default:
                    guard index < items.count else { throw notFound(upTo: i) }
                    items.remove(at: index)
                }
            } else {
                guard index < items.count else { throw notFound(upTo: i) }
                var child = items[index]
                if isLast {
                    guard case .array(var inner) = child, let value else {
                        throw .failure("-append: the value at key path '\(text)' is \(child.kindWithArticle), not an array")
                    }
                    inner.append(value)
                    child = .array(inner)
                } else {
                    try apply(edit, value, to: &child, at: i + 1)
                }
                items[index] = child
            }
            node = .array(items)
        default:
            throw .failure("key path '\(text)': '\(components[..<i].joined(separator: "."))' is \(node.kindWithArticle), not a dictionary or array")
        }
    }
}

extension PlistValue {
    /// The type as `plutil -type` names it.
    var plutilTypeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "float"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        case .uid: "uid"
        }
    }
}
