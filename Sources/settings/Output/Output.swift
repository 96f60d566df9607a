#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist
import SettingsFiles

/// Where a command's result goes: a file (replaced atomically, keeping its permissions and
/// owner) or, for `-`, standard output.
struct Output {
    let path: String

    init(_ path: String) { self.path = path }

    func write(_ bytes: [UInt8]) throws(CLIError) {
        if path == "-" {
            Console.write(bytes)
        } else if let domain = Domain.managing(file: path) {
            // A file the Settings library manages (`create`, `-o` onto a domain's file) is
            // replaced as `import` replaces a domain: locked, checked, kept in its history.
            let input = try Input(parsing: bytes, name: path)
            guard input.syntax.isPropertyListFile else {
                throw .failure("\(path): the Settings library manages this file, and it must stay a property list; not written as \(input.syntax.name)")
            }
            let contents = try Domain.dictionary(input.value, path: path)
            try domain.edit(creating: true, format: input.syntax == .binary ? .binary : .xml) { $0 = contents }
        } else {
            try Files.replace(path, with: bytes)
        }
    }
}
