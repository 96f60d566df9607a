#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SettingsPlist

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

    static func usage(_ message: String) -> CLIError { CLIError(status: .usage, message: message) }
    /// A failure already reported on standard error (lint, diff).
    static var silentFailure: CLIError { CLIError(status: .failure, message: "") }
    static func failure(_ message: String) -> CLIError { CLIError(status: .failure, message: message) }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#else
private let systemWrite = Darwin.write
#endif

/// Small I/O helpers over the C library, so the tool does not need full Foundation.
enum Console {
    /// The standard streams, by file descriptor.
    enum Stream: Int32 {
        case output = 1
        case error = 2
    }

    /// Writes all of `bytes`, retrying short writes and interrupted calls.
    static func write(_ bytes: [UInt8], to stream: Stream = .output) {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var done = 0
            while done < buffer.count {
                let n = systemWrite(stream.rawValue, base + done, buffer.count - done)
                if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }

    static func print(_ text: String, to stream: Stream = .output) {
        write(Array((text + "\n").utf8), to: stream)
    }

    static func error(_ text: String) {
        print("settings: " + text, to: .error)
    }
}

/// Reads a whole file, with an error that names it.
func readFile(_ path: String) throws(CLIError) -> Data {
    do {
        return try Data(contentsOf: URL(filePath: path))
    } catch {
        throw .failure("\(path): cannot read file: \(PlistError.reason(error))")
    }
}

/// Writes a whole file atomically, with an error that names it.
func writeFile(_ bytes: Data, to path: String) throws(CLIError) {
    do {
        try bytes.write(to: URL(filePath: path), options: .atomic)
    } catch {
        throw .failure("\(path): cannot write file: \(PlistError.reason(error))")
    }
}

/// The input formats a command accepts: either plist format, or canonical typed JSON.
enum InputFormat {
    case plist(PlistFormat)
    case typedJSON

    static func detect(_ data: Data) -> InputFormat {
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if first == UInt8(ascii: "{") { return .typedJSON }
        return .plist(PlistFormat.detect(data))
    }
}

/// Reads a plist file (XML, binary, or typed JSON, detected), with errors naming the file.
func readValue(_ path: String) throws(CLIError) -> PlistValue {
    try parseInput(try readFile(path), name: path)
}

/// Parses plist bytes (XML, binary, or typed JSON, detected), with errors naming `name`.
func parseInput(_ data: Data, name: String) throws(CLIError) -> PlistValue {
    do {
        switch InputFormat.detect(data) {
        case .typedJSON: return try PlistValue(typedJSON: data)
        case .plist: return try PlistValue(decoding: data)
        }
    } catch {
        throw .failure(error.inFile(name).description)
    }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
#else
private let systemRead = Darwin.read
#endif

/// All of standard input.
func readStandardInput() -> Data {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { systemRead(0, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        bytes += chunk[..<n]
    }
    return Data(bytes)
}
