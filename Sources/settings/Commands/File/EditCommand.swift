#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SettingsPlist
import SettingsFiles

/// `settings insert|replace|remove KEYPATH ... FILE`, like `plutil -insert`, `-replace`, `-remove`.
enum EditCommand {
    static let typeList = "-bool YES|NO, -integer N, -float N, -string TEXT, -date ISO8601, -data BASE64, -xml PLIST, -json JSON, -array, -dictionary"

    static func run(_ edit: DottedKeyPath.Edit, command: String, _ arguments: [String]) throws(CLIError) {
        var allowed: Set<String> = ["-o", "-r", "-s"]
        if edit != .remove { allowed.insert("TYPE") }
        if edit == .insert { allowed.insert("-append") }
        let args = try PlutilArguments(arguments, command: command, allowed: allowed)
        guard args.positional.count == 2 else {
            throw .usage(edit == .remove ? "remove: expected KEYPATH FILE" : "\(command): expected KEYPATH -TYPE VALUE FILE")
        }
        let keyPath = DottedKeyPath(args.positional[0]), file = args.positional[1]
        try KeyPath.checkDepth(keyPath.components.count)
        let value = edit == .remove ? nil : try args.typedValue(command: command, keyPath: keyPath.text, file: file)
        if args.output == nil || args.output == file, let domain = Domain.managing(file: file) {
            // A file the Settings library manages is changed as `write` changes it: under its
            // lock, from its contents then, checked against its schema, kept in its history.
            return try domain.edit(creating: false) { contents throws(CLIError) in
                var root = PlistValue.dictionary(contents)
                let appends = args.append && KeySuggestion.value(at: keyPath.components, in: root) != nil
                try namingFile(file) { () throws(CLIError) in try keyPath.apply(appends ? .append : edit, value, to: &root) }
                contents = try Domain.dictionary(root, path: file)
            }
        }
        let input = try Input(file: file)
        var root = input.value
        // -append on a key path with nothing there inserts the value there, as plutil does.
        let appends = args.append && KeySuggestion.value(at: keyPath.components, in: root) != nil
        try namingFile(file) { () throws(CLIError) in try keyPath.apply(appends ? .append : edit, value, to: &root) }
        let bytes: [UInt8]
        switch input.syntax {
        case .json:
            bytes = Array((try Render.json(root, readable: args.readable, file: file) + "\n").utf8)
        case .typedJSON:
            bytes = Array((root.typedJSON() + "\n").utf8)
        case .xml, .binary, .openStep:
            do {
                bytes = try root.encodedBytes(as: input.syntax == .binary ? .binary : .xml)
            } catch {
                throw .failure(error.inFile(file).description)
            }
        }
        try Output(args.output ?? file).write(bytes)
    }
}
