import Foundation

// settings-bench: compares Settings with Foundation in one run.
//   swift run -c release settings-bench [--quick] [--samples N] [--sizes 10k,1m,10m] [--only codec|codable|convert|store|persistence|process|model|edit]
//   swift run -c release settings-bench --profile-flush N [HISTORY-LIMIT]   (N flushes only, for perf stat / callgrind)
// Prints `workload<TAB>system<TAB>value<TAB>unit` per result, then the ratios.

var samples = 5
var minimumSampleTime = 0.25
var sizeNames = ["10k", "1m", "10m"]
var only: String?
var quick = false
var convertRuns = 7
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    switch arg {
    case "--quick": samples = 3; minimumSampleTime = 0.05; sizeNames = ["10k"]; quick = true
    case "--samples": samples = Int(args.popFirst() ?? "") ?? samples
    case "--sizes": sizeNames = (args.popFirst() ?? "").split(separator: ",").map(String.init)
    case "--only": only = args.popFirst()
    case "--startup-child-userdefaults":
        ProcessBenchmarks.userDefaultsChild(suite: args.popFirst() ?? "", key: args.popFirst() ?? "")
    case "--profile-store":
        StoreBenchmarks.profile(count: Int(args.popFirst() ?? "") ?? 100_000)
        exit(0)
    case "--profile-flush":
        // --profile-flush N [HISTORY-LIMIT]: N flushes of one change to a 100-key file, nothing
        // else (HISTORY-LIMIT: PersistenceOptions.historyLimit, 20 by default; 0 keeps no generations).
        do {
            try PersistenceBenchmarks.profileFlush(count: Int(args.popFirst() ?? "") ?? 1000, historyLimit: Int(args.first ?? "") ?? 20)
        } catch {
            print("profile failed: \(error)")
            exit(1)
        }
        exit(0)
    case "--profile-codec":
        // --profile-codec binary-read|xml-read|binary-write|xml-write [N]: N runs on the 1 MB workload.
        let operation = args.popFirst() ?? "binary-read"
        do {
            try CodecBenchmarks.profile(operation, count: Int(args.popFirst() ?? "") ?? 10)
        } catch {
            print("profile failed: \(error)")
            exit(1)
        }
        exit(0)
    case "--generate":
        // --generate XML-PATH BINARY-PATH [BYTES]: the convert workload's files, for profiling.
        let (xmlPath, binaryPath) = (args.popFirst() ?? "bench.plist", args.popFirst() ?? "bench.bplist")
        do {
            try ConvertBenchmarks.generate(xmlPath: xmlPath, binaryPath: binaryPath,
                                           targetBytes: Int(args.popFirst() ?? "") ?? ConvertBenchmarks.targetBytes)
        } catch {
            print("generate failed: \(error)")
            exit(1)
        }
        exit(0)
    case "--convert-runs": convertRuns = Int(args.popFirst() ?? "") ?? convertRuns
    default:
        FileHandle.standardError.write(Data("unknown argument \(arg)\n".utf8))
        exit(2)
    }
}
let sizeTable = ["10k": 10_000, "1m": 1_000_000, "10m": 10_000_000]
let sizes = sizeNames.compactMap { name in sizeTable[name].map { (name, $0) } }
let harness = Harness(samples: samples, minimumSampleTime: minimumSampleTime)
print("# settings-bench: \(samples) samples of >= \(minimumSampleTime)s, median; sizes \(sizeNames.joined(separator: ","))")
do {
    if only == nil || only == "codec" { try CodecBenchmarks.run(harness, sizes: sizes) }
    if only == nil || only == "convert" { try ConvertBenchmarks.run(harness, targetBytes: ConvertBenchmarks.targetBytes, runs: convertRuns) }
    if only == nil || only == "codable" {
        for (label, target) in sizes where target <= 1_000_000 {
            try CodecBenchmarks.runCodable(harness, label: label, targetBytes: target)
        }
    }
    if only == nil || only == "store" { StoreBenchmarks.run(harness) }
    if only == nil || only == "persistence" { try PersistenceBenchmarks.run(harness) }
    if only == nil || only == "process" { try ProcessBenchmarks.run(harness, quick: quick) }
    if only == nil || only == "edit" { try EditBenchmarks.run(harness, quick: quick) }
    if only == nil || only == "model" { try ModelBenchmarks.run(harness, targetBytes: sizes.contains { $0.1 >= 1_000_000 } ? 1_000_000 : 10_000) }
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
harness.printRatios(of: "Settings")
