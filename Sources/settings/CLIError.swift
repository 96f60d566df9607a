import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Exit statuses, as `defaults` and `plutil` use them.
enum ExitStatus: Int32 {
    case success = 0
    /// The operation failed (unreadable file, malformed plist, missing key).
    case failure = 1
    /// The command line was wrong.
    case usage = 2
}

/// A failure that ends the command with a one-line message on standard error.
struct CLIError: Error {
    var status: ExitStatus
    var message: String
    /// Whether a usage error is followed by "Run 'settings COMMAND --help' for usage.".
    var hintsHelp = true

    static func usage(_ message: String) -> CLIError { CLIError(status: .usage, message: message) }
    /// Trouble that is not a usage error but exits 2, for commands whose 1 means something else
    /// (`diff`: 1 is "different", so a file that cannot be read is 2, as Unix `diff` has it).
    static func trouble(_ message: String) -> CLIError { CLIError(status: .usage, message: message, hintsHelp: false) }
    /// A failure already reported on standard error (lint, diff).
    static var silentFailure: CLIError { CLIError(status: .failure, message: "") }
    static func failure(_ message: String) -> CLIError { CLIError(status: .failure, message: message) }
}

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

extension String {
    func padding(toLength n: Int) -> String {
        count >= n ? self + " " : self + String(repeating: " ", count: n - count)
    }
}
