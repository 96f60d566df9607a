import Foundation
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tool as a whole: usage errors exit 2, every command has help.
struct SettingsToolTests {
    @Test(arguments: [["print"], ["convert", "xml9", "x"], ["frobnicate"], ["print", "--bogus", "x"], []])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
    }

    @Test(arguments: ["read", "read-type", "write", "delete", "rename", "keys", "domains", "find", "import", "export",
                      "print", "convert", "lint", "extract", "type", "insert", "replace", "remove", "create", "diff"])
    func everyCommandHasHelp(command: String) throws {
        let out = try CLI.run(command, "--help")
        #expect(out.status == 0)
        #expect(out.stdout.hasPrefix("usage: settings \(command)"))
    }
}
