public import Foundation

/// What a program run by ``runProgram(_:_:environment:in:)`` printed, and how it ended.
public struct ProgramOutput: Sendable {
    /// Its exit status.
    public var status: Int32
    /// Its standard output.
    public var stdout: String
    /// Its standard error.
    public var stderr: String
    /// Both outputs, standard output first.
    public var output: String { stdout + stderr }
}

/// Runs `program` with `arguments`, the test's environment plus `environment`, in `directory`
/// (the current one when `nil`), and waits for it: the one way the test targets start a program
/// and collect what it prints. It blocks the calling thread: from an async test, call it through
/// a helper that runs it off Swift's cooperative pool.
public func runProgram(
    _ program: URL, _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil
) throws -> ProgramOutput {
    let process = Process()
    if let directory { process.currentDirectoryURL = directory }
    process.executableURL = program
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProgramOutput(status: process.terminationStatus,
                         stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
}
