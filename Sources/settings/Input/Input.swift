import SettingsPlist

/// A parsed input: its value and the syntax it was written in.
struct Input {
    var value: PlistValue
    var syntax: InputSyntax

    /// Parses `bytes` in whichever syntax they are, with errors naming `name` and the position.
    init(parsing bytes: [UInt8], name: String) throws(CLIError) {
        var syntax = InputSyntax.detect(bytes)
        do throws(PlistError) {
            switch syntax {
            case .xml, .binary:
                value = try bytes.withUnsafeBufferPointer { buffer throws(PlistError) in try PlistValue.decodeBuffer(buffer) }
            case .typedJSON:
                do {
                    value = try PlistValue(typedJSON: bytes)
                } catch {
                    // Plain JSON whose first key happens to be a type's name.
                    var reader = JSONReader(bytes)
                    guard let plain = try? reader.read() else { throw error }
                    value = plain
                    syntax = .json
                }
            case .json:
                var reader = JSONReader(bytes)
                value = try reader.read()
            case .openStep:
                let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
                guard String(validating: text, as: UTF8.self) != nil else {
                    throw PlistError(.invalidValue, "OpenStep text that is not valid UTF-8")
                }
                value = try text.withUnsafeBufferPointer { buffer throws(PlistError) in try PlistValue.literalBuffer(buffer) }
            }
        } catch {
            throw .failure(error.inFile(name).description)
        }
        self.syntax = syntax
    }

    /// Reads and parses a file (`-` is standard input); messages name it `name` (the path as
    /// the user gave it, when `path` is where a link of theirs leads).
    init(file path: String, named name: String? = nil) throws(CLIError) {
        if path == "-" {
            try self.init(parsing: try Console.readStandardInput(), name: "<stdin>")
        } else {
            try self.init(parsing: try Files.read(path), name: name ?? path)
        }
    }
}
