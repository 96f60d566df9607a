import Foundation
import SettingsTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The test targets' one launcher (`RunningProgram`, `runProgram`): its waits end at their limit,
/// and a program that outlives `finish`'s is killed and reported.
struct RunningProgramTests {
    static let shell = URL(filePath: "/bin/sh")

    @Test func aProgramThatOutlivesItsLimitsIsReadUntilThenKilledAndReportedHung() async throws {
        let (first, late, running, end) = try await offThePool { Result { () throws -> (String?, String?, Bool, ProgramOutput) in
            let program = try RunningProgram(Self.shell, ["-c", "echo one; exec sleep 600"])
            let first = program.line(within: .seconds(600))
            let late = program.line(within: .milliseconds(200))  // nothing more comes: the wait ends
            return (first, late, program.isRunning, program.finish(within: .milliseconds(200)))
        } }.get()
        #expect(first == "one")
        #expect(late == nil)
        #expect(running)
        #expect(end.hung)
        #expect(end.endedBySignal)
        #expect(end.status == SIGKILL)
    }

    @Test func linesStopAtTheEndOfTheOutputAndFinishHasTheRest() async throws {
        let (two, rest, end) = try await offThePool { Result { () throws -> ([String], [String], ProgramOutput) in
            let program = try RunningProgram(Self.shell, ["-c", "printf 'a\\nb\\nc\\n'; echo oops >&2; exit 3"])
            let two = program.lines(2)
            let end = program.finish()
            return (two, end.lines, end)
        } }.get()
        #expect(two == ["a", "b"])
        #expect(rest == ["c"])
        #expect(!end.hung && !end.endedBySignal)
        #expect(end.status == 3)
        #expect(end.stderr == "oops\n")
        let all = try await offThePool { Result { try RunningProgram(Self.shell, ["-c", "printf 'a\\nb'"]).lines(5) } }.get()
        #expect(all == ["a", "b"])  // fewer: the output ended
    }

    @Test func bothOutputsGoToTheOutputFileWhenOneIsGiven() async throws {
        let dir = try TemporaryDirectory()
        let log = dir.file("program.log")
        let (line, end) = try await offThePool { Result { () throws -> (String?, ProgramOutput) in
            let program = try RunningProgram(Self.shell, ["-c", "echo out; echo err >&2"], outputFile: log)
            return (program.line(), program.finish())
        } }.get()
        #expect(line == nil)
        #expect(end.status == 0 && end.stdout.isEmpty && end.stderr.isEmpty)
        #expect(try String(contentsOf: log, encoding: .utf8) == "out\nerr\n")
    }

    /// Programs started from several threads at once inherit none of each other's descriptors.
    /// Foundation's `Process` on Linux closes every descriptor but the program's own in the
    /// child, up to the highest it saw open when it looked; a pipe or the exit-notice socket
    /// another start made after that look went to the child too, and the first program's end was
    /// noticed only when the second ended. (The likely cause of a CI run in which an `exit-many`
    /// child that ends in half a second was reported hung, exit status 0, and its test ended
    /// with the 10,000-store child started beside it. The race did not show in this test's runs
    /// without the lock here; the lock rules it out.)
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "reads the programs' descriptors in /proc"))
    func programsStartedAtOnceInheritNoneOfEachOthersDescriptors() async throws {
        let leaks = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await offThePool {
                        var leaks: [String] = []
                        for _ in 0..<100 {
                            // The shell waits for a line on its input. Its descriptors are then 0, 1
                            // and 2, and the socket whose closing tells Foundation it ended.
                            guard let program = try? RunningProgram(Self.shell, ["-c", "echo ready; read line"], input: true),
                                  program.line(within: .seconds(600)) == "ready" else {
                                return ["the shell did not start"]
                            }
                            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(program.processIdentifier)/fd")) ?? []
                            if fds.count != 4 {
                                let links = fds.sorted().map { fd in
                                    "\(fd) → " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(program.processIdentifier)/fd/\(fd)")) ?? "?")
                                }
                                leaks.append("\(program.processIdentifier): \(links.joined(separator: ", "))")
                            }
                            _ = program.finish(within: .seconds(600))
                        }
                        return leaks
                    }
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(leaks.isEmpty)
    }
}
