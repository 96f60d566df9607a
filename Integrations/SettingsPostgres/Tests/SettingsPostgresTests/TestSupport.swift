import Foundation
import Settings
import SettingsPlist
import Synchronization
import Testing
import PostgresNIO
import Logging
@testable import SettingsPostgres

/// The server from `test-server.sh`; tests skip (with this message) when it is not set.
enum TestServer {
    static let url = ProcessInfo.processInfo.environment["SETTINGS_PG_URL"]
    static let enabled: ConditionTrait = .enabled(if: url != nil, "SETTINGS_PG_URL is not set: run `bash Scripts/test-server.sh swift test`")
    static let env = ProcessInfo.processInfo.environment
    static let adminURL = env["SETTINGS_SYNC_ADMIN_URL"] ?? ""
    static let adminPassword = env["SETTINGS_SYNC_ADMIN_PASSWORD"]
    static let port = Int(env["SETTINGS_PG_PORT"] ?? "") ?? 5432
    static let database = env["SETTINGS_PG_DATABASE"] ?? "settings"

    /// The URL of a sync user.
    static func url(user: String, password: String) -> String {
        "postgres://\(user):\(password)@127.0.0.1:\(port)/\(database)"
    }

    /// A new sync user made by the admin tool's code (`settings-sync-admin add-user`), with a random password.
    static func makeUser(_ prefix: String = "u") async throws -> (name: String, password: String, url: String) {
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
        let password = UUID().uuidString
        try await SettingsSyncAdmin(url: adminURL, password: adminPassword).addUser(name, password: password)
        return (name, password, url(user: name, password: password))
    }
}

/// A unique app id (space) per test.
func uniqueApp(_ name: String = #function) -> String {
    "test.\(name.prefix(40)).\(UUID().uuidString.prefix(8))"
}

/// A fresh temporary directory, removed with everything in it when the last reference goes: the
/// test's own, and those of the ``TestDevice``s that keep their files in it.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "settings-sync-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The URL of `path` in the directory.
    func appending(path: String) -> URL { url.appending(path: path) }
}

/// One "device": a file store in its own directory and its sync, running. ``stop()`` it when done:
/// its files stay until then (the directory goes with its last user, after the store's last save).
final class TestDevice: Sendable {
    let directory: TemporaryDirectory
    let store: SettingsStore
    let sync: SettingsSync
    let task: Task<Void, Never>

    /// The directory of the settings file.
    var dir: URL { directory.url }

    init(
        app: String, dir: TemporaryDirectory? = nil, scope: SettingsSyncScope = .all, url: String? = TestServer.url,
        secrets: SettingsSyncSecrets = .notSynced,
        autosave: Duration? = .milliseconds(50), start: Bool = true
    ) throws {
        let directory = try dir ?? TemporaryDirectory()
        self.directory = directory
        store = SettingsStore.file(directory.appending(path: "settings.plist"), autosaveDelay: autosave)
        sync = try SettingsSync.postgres(url: url ?? "", store: store, app: app, scope: scope, secrets: secrets)
        let sync = self.sync
        task = Task { if start { await sync.run() } }
    }

    /// `synchronize()`, retried through brief outages, up to `timeout`.
    func synchronize(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                try await sync.synchronize()
                return
            } catch {
                if ContinuousClock.now > deadline { throw error }
                try await Task.sleep(for: .milliseconds(50))  // retry pacing, not synchronisation
            }
        }
    }

    /// Stops the sync, then saves what it applied: nothing is written to the directory afterwards.
    func stop() async {
        sync.stop()
        await task.value
        try? await store.flush()
    }

    /// A test that failed before ``stop()`` leaves no sync running.
    deinit { sync.stop() }
}

/// Collects a stream's elements in the background.
final class Collector<Element: Sendable>: Sendable {
    final class Items: Sendable {
        let list = Mutex<[Element]>([])
    }
    private let items = Items()

    init(_ stream: AsyncStream<Element>) {
        let items = self.items
        Task { for await x in stream { items.list.withLock { $0.append(x) } } }
    }

    var all: [Element] { items.list.withLock { $0 } }
}

/// A direct connection to the test server, for planting rows and reading counters.
/// `superuser`: as the administrator of test-server.sh; else as `user` (default the sync user `settings`).
/// `database`: another database of the test server than the tests' own.
@discardableResult
func withTestConnection<T: Sendable>(
    superuser: Bool = false, user: (name: String, password: String)? = nil, database: String? = nil,
    _ body: (PostgresConnection) async throws -> T
) async throws -> T {
    let env = ProcessInfo.processInfo.environment
    let config = PostgresConnection.Configuration(
        host: env["SETTINGS_PG_HOST"] ?? "127.0.0.1", port: TestServer.port,
        username: superuser ? "postgres" : user?.name ?? env["SETTINGS_PG_USER"] ?? "settings",
        password: superuser ? TestServer.adminPassword : user?.password ?? env["SETTINGS_PG_PASSWORD"],
        database: database ?? env["SETTINGS_PG_DATABASE"], tls: .disable)
    let conn = try await PostgresConnection.connect(configuration: config, id: 1, logger: Logger(label: "tests"))
    do {
        let result = try await body(conn)
        try? await conn.close()   // the body may have had the server end the session
        return result
    } catch {
        try? await conn.close()
        throw error
    }
}

/// The space's last change number on the server (the sync user `settings`).
func serverSeq(_ app: String) async throws -> Int64 {
    try await withTestConnection { conn in
        var seq: Int64 = 0
        for try await s in try await conn.query("SELECT seq FROM settings_sync.settings_sync_spaces WHERE app = \(app)", logger: Logger(label: "tests")).decode(Int64.self) {
            seq = s
        }
        return seq
    }
}

/// Runs `body` with an administrator of a new database on the test server, installed, and the
/// database's name; drops the database (ending its sessions) afterwards.
@discardableResult
func withPrivateDatabase<T>(_ body: (SettingsSyncAdmin, String) async throws -> T) async throws -> T {
    let database = "settings_t_\(UUID().uuidString.prefix(8).lowercased())"
    try await withTestConnection(superuser: true) { conn in
        try await conn.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(database)"), logger: Logger(label: "tests"))
    }
    do {
        var url = try #require(URLComponents(string: TestServer.adminURL))
        url.path = "/\(database)"
        let admin = try SettingsSyncAdmin(url: try #require(url.string), password: TestServer.adminPassword)
        try await admin.install()
        let result = try await body(admin, database)
        try await dropDatabase(database)
        return result
    } catch {
        try? await dropDatabase(database)
        throw error
    }
}

func dropDatabase(_ name: String) async throws {
    try await withTestConnection(superuser: true) { conn in
        try await conn.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)"), logger: Logger(label: "tests"))
    }
}

/// Runs `executable` with `arguments`, the test's environment changed by `environment` (a `nil`
/// value removes the variable), and `input` on its standard input, and waits for it, `limit` at
/// most: the one place this package's tests start a process. Its input and outputs are files,
/// never pipes, so it can neither block on a full one nor end before the test wrote it.
///
/// - Throws: ``ProgramHung`` when it was still running after `limit` (it is killed then).
func runProgram(
    _ executable: URL, _ arguments: [String], environment: [String: String?] = [:], input: String = "",
    within limit: Duration = .seconds(300)
) throws -> (status: Int32, stdout: String, stderr: String) {
    let directory = try TemporaryDirectory()
    let inputFile = directory.appending(path: "stdin")
    let outputFile = directory.appending(path: "stdout"), errorFile = directory.appending(path: "stderr")
    try Data(input.utf8).write(to: inputFile)
    try Data().write(to: outputFile)
    try Data().write(to: errorFile)
    let inputHandle = try FileHandle(forReadingFrom: inputFile)
    let outputHandle = try FileHandle(forWritingTo: outputFile), errorHandle = try FileHandle(forWritingTo: errorFile)
    defer { for handle in [inputHandle, outputHandle, errorHandle] { try? handle.close() } }

    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    var variables = ProcessInfo.processInfo.environment
    for (name, value) in environment { variables[name] = value }
    process.environment = variables
    process.standardInput = inputHandle
    process.standardOutput = outputHandle
    process.standardError = errorHandle
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try processStarts.withLock { try process.run() }
    let (seconds, attoseconds) = limit.components
    if exited.wait(timeout: .now() + .seconds(Int(seconds)) + .nanoseconds(Int(attoseconds / 1_000_000_000))) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw ProgramHung(program: executable.lastPathComponent, arguments: arguments, limit: limit)
    }
    process.waitUntilExit()
    return (process.terminationStatus,
            String(decoding: try Data(contentsOf: outputFile), as: UTF8.self),
            String(decoding: try Data(contentsOf: errorFile), as: UTF8.self))
}

/// Held while a program starts: one start at a time. Foundation's `Process` on Linux closes, in
/// the child, every descriptor up to the highest it saw open when it looked; the socket that
/// tells Foundation a program ended, made by another start after that look, went to this child
/// too, and that program's end was noticed only once this child (a server, say) ended as well.
private let processStarts = NSLock()

/// A program ``runProgram(_:_:environment:input:within:)`` ran was still running at its limit.
struct ProgramHung: Error, CustomStringConvertible {
    let program: String
    let arguments: [String]
    let limit: Duration
    var description: String { "\(program) \(arguments.joined(separator: " ")) still ran after \(limit): killed" }
}
