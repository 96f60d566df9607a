#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Small I/O helpers over the C library, so the tool does not need full Foundation.
enum Console {
    /// The standard streams, by file descriptor.
    enum Stream: Int32 {
        case output = 1
        case error = 2
    }

    /// Writes all of `bytes` (a closed pipe ends the writing quietly).
    static func write(_ bytes: [UInt8], to stream: Stream = .output) {
        _ = Files.writeAll(stream.rawValue, bytes)
    }

    static func print(_ text: String, to stream: Stream = .output) {
        write(Array((text + "\n").utf8), to: stream)
    }

    /// One message line on standard error, `settings: ` first, its control characters escaped
    /// (it quotes key and file names, which may hold any character).
    static func error(_ text: String) {
        print("settings: " + text.escapingControlCharacters, to: .error)
    }

    /// All of standard input.
    static func readStandardInput() throws(CLIError) -> [UInt8] {
        try Files.readAll(0, name: "<stdin>")
    }
}
