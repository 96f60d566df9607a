import Foundation
import SettingsPlist
#if canImport(Glibc)
import Glibc
#endif

/// Whole-process file conversion, XML → binary and binary → XML, beside the native peers:
/// libplist's `plistutil` (C) and CPython's `plistlib`. Each run is a fresh process; the time is
/// the median wall time and, apart, the median CPU time (user + system, from `wait4`: steadier on
/// a shared machine), the memory the converter's peak resident set (GNU `time`'s `%M`). The
/// `Settings` row is `settings convert` from the same build directory as this benchmark.
enum ConvertBenchmarks {
    /// The generator's size argument for a file of about 6 MB of XML (the generator undershoots).
    static let targetBytes = 6_920_000

    /// One converter: a name, and the command line for (input, output, output format).
    struct Peer {
        var name: String
        var command: (_ input: String, _ output: String, _ toXML: Bool) -> [String]
    }

    static func peers(settingsTool: String) -> [Peer] {
        [
            Peer(name: "Settings") { input, output, toXML in
                [settingsTool, "convert", toXML ? "xml1" : "binary1", input, "-o", output]
            },
            Peer(name: "libplist (plistutil)") { input, output, toXML in
                ["/usr/bin/plistutil", "-i", input, "-o", output, "-f", toXML ? "xml" : "bin"]
            },
            Peer(name: "CPython plistlib") { input, output, toXML in
                let format = toXML ? "FMT_XML" : "FMT_BINARY"
                return ["/usr/bin/python3", "-c",
                        "import plistlib,sys\nd=plistlib.load(open(sys.argv[1],'rb'))\n"
                            + "plistlib.dump(d,open(sys.argv[2],'wb'),fmt=plistlib.\(format),sort_keys=False)",
                        input, output]
            },
        ]
    }

    /// Generates the settings-shaped file (`targetBytes` of XML) in both formats under a fresh
    /// temporary directory and converts each with every available peer.
    static func run(_ h: Harness, targetBytes: Int, runs: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("settings-bench-convert-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let value = Generator.settings(targetBytes: targetBytes)
        let xmlPath = directory.appendingPathComponent("in.plist").path
        let binaryPath = directory.appendingPathComponent("in.bplist").path
        let xml = try value.encoded(as: .xml)
        let binary = try value.encoded(as: .binary)
        try xml.write(to: URL(filePath: xmlPath))
        try binary.write(to: URL(filePath: binaryPath))
        // The same conversion of an empty dictionary: each program's own start-up memory.
        let emptyXML = directory.appendingPathComponent("empty.plist").path
        let emptyBinary = directory.appendingPathComponent("empty.bplist").path
        try PlistValue.dictionary([:]).encoded(as: .xml).write(to: URL(filePath: emptyXML))
        try PlistValue.dictionary([:]).encoded(as: .binary).write(to: URL(filePath: emptyBinary))
        let label = "\((xml.count + 500_000) / 1_000_000)mb"
        print("# convert-\(label): XML \(xml.count) bytes, binary \(binary.count) bytes, \(runs) runs each, whole process")
        let tool = settingsToolPath()
        for (name, input, empty, toXML) in [("convert-xml-to-binary-\(label)", xmlPath, emptyXML, false),
                                            ("convert-binary-to-xml-\(label)", binaryPath, emptyBinary, true)] {
            for peer in peers(settingsTool: tool) {
                let output = directory.appendingPathComponent("out-\(peer.name.count)").path
                let argv = peer.command(input, output, toXML)
                guard FileManager.default.isExecutableFile(atPath: argv[0]) else {
                    print("# \(peer.name): \(argv[0]) not found, skipped")
                    continue
                }
                var times: [Double] = []
                var cpu: [Double] = []
                for _ in 0 ..< runs {
                    let (wall, used) = try spawnAndWait(argv)
                    times.append(wall)
                    cpu.append(used)
                }
                cpu.sort()
                let peak = try peakMemory(argv, scratch: directory.appendingPathComponent("rss").path)
                let idle = try peakMemory(peer.command(empty, output, toXML), scratch: directory.appendingPathComponent("rss").path)
                times.sort()
                let median = times[times.count / 2]
                h.record(Harness.Result(workload: name, system: peer.name, value: median * 1000, unit: "ms", seconds: median))
                let cpuMedian = cpu[cpu.count / 2]
                h.record(Harness.Result(workload: name + "-cpu", system: peer.name, value: cpuMedian * 1000, unit: "ms", seconds: cpuMedian))
                let larger = max(xml.count, binary.count)
                print("# \(name)\t\(peer.name)\tpeak RSS \(peak / 1024) KiB = \(String(format: "%.2f", Double(peak) / Double(larger)))x the larger file (\(larger) bytes); "
                    + "\((peak - idle) / 1024) KiB above converting an empty plist (\(idle / 1024) KiB) = \(String(format: "%.2f", Double(peak - idle) / Double(larger)))x")
            }
        }
    }

    /// Writes the workload's XML and binary files.
    static func generate(xmlPath: String, binaryPath: String, targetBytes: Int) throws {
        let value = Generator.settings(targetBytes: targetBytes)
        try value.encoded(as: .xml).write(to: URL(filePath: xmlPath))
        try value.encoded(as: .binary).write(to: URL(filePath: binaryPath))
    }

    /// The `settings` executable beside this benchmark (same build configuration).
    static func settingsToolPath() -> String {
        let me = URL(filePath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("settings").path
    }

    /// The peak resident set of `argv` in bytes, measured by GNU `time` (`%M`).
    ///
    /// Not `wait4` here: a child spawned from this process inherits, on `exec`, the high-water
    /// mark of this process's memory (tens of MB of generated data). `time` is small, and its own
    /// child starts from `time`'s memory, so `%M` is the converter's own peak.
    static func peakMemory(_ argv: [String], scratch: String) throws -> Int {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else { return 0 }
        _ = try spawnAndWait(["/usr/bin/time", "-f", "%M", "-o", scratch] + argv)  // its peak, not time's
        let text = (try? String(contentsOfFile: scratch, encoding: .utf8)) ?? ""
        return (Int(text.split(separator: "\n").last.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0) * 1024
    }

    /// Runs `argv` to completion; its wall time and CPU time (user + system) in seconds.
    static func spawnAndWait(_ argv: [String]) throws -> (wall: Double, cpu: Double) {
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        cArgs.append(nil)
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let status = posix_spawn(&pid, argv[0], nil, nil, cArgs, environ)
        guard status == 0 else { throw BenchError.mismatch("cannot start \(argv[0]): \(status)") }
        var wstatus: Int32 = 0
        var usage = rusage()
        while wait4(pid, &wstatus, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchError.mismatch("wait4 failed: \(errno)") }
        }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard wstatus == 0 else { throw BenchError.mismatch("\(argv[0]) exited with status \(wstatus)") }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return (wall, seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }
}
