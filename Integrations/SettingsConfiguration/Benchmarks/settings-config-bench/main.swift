// ConfigReader.int(forKey:) through SettingsProvider against swift-configuration's own
// InMemoryProvider, in the same run. Build in release:
//
//   swift run -c release settings-config-bench            # --quick for a smoke run
import Configuration
import Foundation
import Settings
import SettingsConfiguration

let quick = CommandLine.arguments.contains("--quick")
let reads = quick ? 20_000 : 1_000_000
let rounds = quick ? 2 : 7

/// The median time of one `reader.int(forKey: "http.port")` over `rounds` rounds of `reads`.
func measure(_ reader: ConfigReader) -> Duration {
    let clock = ContinuousClock()
    var times: [Duration] = []
    var sum = 0
    for _ in 0..<rounds {
        let start = clock.now
        for _ in 0..<reads { sum &+= reader.int(forKey: "http.port", default: 0) }
        times.append((clock.now - start) / reads)
    }
    precondition(sum == 8080 * reads * rounds, "every read saw the value")
    return times.sorted()[times.count / 2]
}

/// `123 ns` with one decimal.
func format(_ d: Duration) -> String {
    let ns = Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
    return "\((ns * 10).rounded() / 10) ns"
}

let inMemory = ConfigReader(provider: InMemoryProvider(values: ["http.port": 8080]))
let settingsInMemory = ConfigReader(provider: SettingsProvider(store: .inMemory(["http": ["port": 8080]])))
let fileStore = SettingsStore.file(URL(filePath: FileManager.default.temporaryDirectory.path + "/settings-config-bench-\(getpid()).plist"))
fileStore["http/port"] = 8080
let settingsFile = ConfigReader(provider: SettingsProvider(store: fileStore))

let base = measure(inMemory)
let memory = measure(settingsInMemory)
let file = measure(settingsFile)
print("ConfigReader.int(forKey:), median of \(rounds) x \(reads) reads:")
print("  InMemoryProvider                  \(format(base))")
print("  SettingsProvider (in-memory store) \(format(memory))   \(((memory / base) * 100).rounded() / 100)x")
print("  SettingsProvider (file store)      \(format(file))   \(((file / base) * 100).rounded() / 100)x")
