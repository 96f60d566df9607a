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
