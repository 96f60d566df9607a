#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Settings
import SettingsPlist

/// A fresh directory per test, removed when the test ends.
final class TempDir {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "settings-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    /// A file store in this directory (autosave off unless asked).
    func store(_ name: String = "settings.plist", autosaveDelay: Duration? = nil) -> SettingsStore {
        SettingsStore.file(url.appending(path: name), autosaveDelay: autosaveDelay)
    }
}

/// An executable built beside the test bundle (SwiftPM builds every product of this package for
/// `swift test`; `ci.sh` builds the root package's `settings` tool there too).
func builtExecutable(_ name: String) -> URL {
    var dir = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
    while dir.path.contains(".xctest") { dir = dir.deletingLastPathComponent() }
    return dir.appending(path: name)
}

/// Starts `executable` with `arguments` and the test's environment plus `environment`, its
/// standard output and standard error to `output` and `errors` (the test's own when `nil`): the
/// one place this package's tests start a process. `onExit` is called with its status when it
/// ends; otherwise the caller waits for it.
func startProcess(
    _ executable: URL, _ arguments: [String], environment: [String: String] = [:], output: Pipe? = nil, errors: Pipe? = nil,
    onExit: (@Sendable (Int32) -> Void)? = nil
) throws -> Process {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    if let output { process.standardOutput = output }
    if let errors { process.standardError = errors }
    if let onExit { process.terminationHandler = { onExit($0.terminationStatus) } }
    try processStarts.withLock { try process.run() }
    return process
}

/// Held while a program starts: one start at a time. Foundation's `Process` on Linux closes, in
/// the child, every descriptor up to the highest it saw open when it looked; the socket that
/// tells Foundation a program ended, made by another start after that look, went to this child
/// too, and that program's end was noticed only once this child ended as well.
private let processStarts = NSLock()

/// Runs `executable` (``startProcess(_:_:environment:output:errors:onExit:)``) to its end without
/// blocking the test's thread, and returns its exit status; one still running after `limit` is
/// killed and ``ProcessHung`` thrown.
func runProcess(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                within limit: Duration = .seconds(60)) async throws -> Int32 {
    let (ended, exit) = AsyncStream<Int32>.makeStream(bufferingPolicy: .bufferingNewest(1))
    let pid = try startProcess(executable, arguments, environment: environment) { status in
        exit.yield(status)
        exit.finish()
    }.processIdentifier
    return try await withThrowingTaskGroup(of: Int32?.self) { group in
        group.addTask {
            for await status in ended { return status }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: limit)  // the bound on the wait, not a synchronisation
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        guard let status = first else {
            kill(pid, SIGKILL)
            throw ProcessHung(executable: executable.path, limit: limit)
        }
        return status
    }
}

/// A process that had not ended within its limit (killed).
struct ProcessHung: Error, CustomStringConvertible {
    let executable: String
    let limit: Duration
    var description: String { "\(executable) was still running after \(limit): killed" }
}

/// A TCP port on the loopback interface that nothing listens on now: the kernel picks it (bind
/// to port 0), and the socket is closed before the port is handed out, for a test's service.
func freePort() throws -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw SocketError(call: "socket", code: errno) }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
        }
    }
    guard bound else { throw SocketError(call: "bind", code: errno) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A socket call that failed, with its `errno`.
struct SocketError: Error {
    let call: String
    let code: Int32
}

/// The magic bytes of swift-configuration's compatibility suite (`[UInt8].magic`, `.magic2`).
let magic: [UInt8] = Array("magic".utf8)
let magic2: [UInt8] = Array("magic2".utf8)

/// The data `ProviderCompatTest` requires, as a store's nested dictionaries.
let compatValues: PlistDictionary = [
    "string": "Hello",
    "int": 42,
    "double": 3.14,
    "bool": true,
    "bytes": .data(Data(magic)),
    "stringy": ["array": ["Hello", "World"]],
    "inty": ["array": [42, 24]],
    "doubly": ["array": [3.14, 2.72]],
    "booly": ["array": [true, false]],
    "byteChunky": ["array": [.data(Data(magic)), .data(Data(magic2))]],
    "other": [
        "string": "Other Hello",
        "int": 24,
        "double": 2.72,
        "bool": false,
        "bytes": .data(Data(magic2)),
        "stringy": ["array": ["Hello", "Swift"]],
        "inty": ["array": [16, 32]],
        "doubly": ["array": [0.9, 1.8]],
        "booly": ["array": [false, true, true]],
        "byteChunky": ["array": [.data(Data(magic)), .data(Data(magic2)), .data(Data(magic))]],
    ],
]
