// ConfigReader.int(forKey:) through SettingsProvider against swift-configuration's own
// InMemoryProvider, in the same run. Build in release:
//
//   swift run -c release settings-config-bench            # --quick for a smoke run
import Configuration
import Settings
import SettingsConfiguration

let quick = CommandLine.arguments.contains("--quick")
let reads = quick ? 2_000 : 100_000
let rounds = quick ? 2 : 7

/// The time of one `reader.int(forKey: "http.port")`, averaged over `reads` reads.
func measure(_ reader: ConfigReader) -> Duration {
    let clock = ContinuousClock()
    var sum = 0
    let start = clock.now
    for _ in 0..<reads { sum &+= reader.int(forKey: "http.port", default: 0) }
    let time = (clock.now - start) / reads
    precondition(sum == 8080 * reads, "every read saw the value")
    return time
}

/// One row: the name, the time, and the ratio to `base`.
func report(_ name: String, _ time: Duration, against base: Duration) {
    let padded = name + String(repeating: " ", count: max(0, 36 - name.count))
    print("  \(padded)\(format(time))   \(((time / base) * 100).rounded() / 100)x")
}

/// `123 ns` with one decimal.
func format(_ d: Duration) -> String {
    let ns = Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
    return "\((ns * 10).rounded() / 10) ns"
}

let inMemory = ConfigReader(provider: InMemoryProvider(values: ["http.port": 8080]))
let settingsInMemory = ConfigReader(provider: SettingsProvider(store: .inMemory(["http": ["port": 8080]])))

// Interleaved rounds, so that a busy machine slows both alike.
var base: [Duration] = [], memory: [Duration] = []
for _ in 0..<rounds {
    base.append(measure(inMemory))
    memory.append(measure(settingsInMemory))
}
func median(_ times: [Duration]) -> Duration { times.sorted()[times.count / 2] }
print("ConfigReader.int(forKey:), median of \(rounds) rounds of \(reads) reads each, interleaved:")
report("InMemoryProvider", median(base), against: median(base))
report("SettingsProvider", median(memory), against: median(base))
