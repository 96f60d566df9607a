import Synchronization
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
        let line = "settings: " + text.escapingControlCharacters
        let held = heldErrors.withLock { held -> Bool in
            guard held != nil else { return false }
            held?.append(line)
            return true
        }
        if !held { print(line, to: .error) }
    }

    /// Error lines held back while a full screen owns the terminal (`settings edit`), where a
    /// line written to standard error would tear the screen: `nil` when lines go out at once.
    static let heldErrors = Mutex<[String]?>(nil)

    /// Holds back error lines (``heldErrors``) until ``takeHeldErrors()``.
    static func holdErrors() {
        heldErrors.withLock { if $0 == nil { $0 = [] } }
    }

    /// The error lines held back since ``holdErrors()`` or the last take; they stay held.
    static func takeHeldErrors() -> [String] {
        heldErrors.withLock { held in
            let lines = held ?? []
            if held != nil { held = [] }
            return lines
        }
    }

    /// Stops holding error lines back and writes the ones held.
    static func releaseErrors() {
        let lines = heldErrors.withLock { held in
            defer { held = nil }
            return held ?? []
        }
        for line in lines { print(line, to: .error) }
    }

    /// All of standard input.
    static func readStandardInput() throws(CLIError) -> [UInt8] {
        try Files.readAll(0, name: "<stdin>")
    }
}
