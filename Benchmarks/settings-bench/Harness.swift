import Foundation

/// Times workloads and prints `workload<TAB>system<TAB>value<TAB>unit` lines, then ratios.
final class Harness {
    struct Result {
        var workload: String
        var system: String
        var value: Double
        var unit: String
        /// Seconds per operation (the median), for ratios.
        var seconds: Double
    }

    let samples: Int
    let minimumSampleTime: Double
    var results: [Result] = []

    init(samples: Int, minimumSampleTime: Double) {
        self.samples = samples
        self.minimumSampleTime = minimumSampleTime
    }

    /// The median over `samples` of the seconds one call of `body` takes. Each sample repeats
    /// `body` until at least `minimumSampleTime` has passed, so short operations are timed in bulk.
    func medianSeconds(_ body: () throws -> Void) rethrows -> Double {
        try body()  // warm-up: caches, lazy initialisation, page faults
        var perCall: [Double] = []
        for _ in 0..<samples { perCall.append(try sampleSeconds(body)) }
        perCall.sort()
        return perCall[perCall.count / 2]
    }

    /// ``medianSeconds(_:)`` of several bodies measured in turn: each round takes one sample of
    /// each, so a machine that drifts (another program's writes, the disk's cache) weighs on all
    /// of them alike, not on whichever was measured while it lasted. For workloads that wait on
    /// the disk, whose time moves by a tenth from one minute to the next.
    func interleavedMedianSeconds(_ bodies: [() throws -> Void]) throws -> [Double] {
        for body in bodies { try body() }  // warm-up
        var perCall = Array(repeating: [Double](), count: bodies.count)
        for _ in 0..<samples {
            for (index, body) in bodies.enumerated() { perCall[index].append(try sampleSeconds(body)) }
        }
        return perCall.map { $0.sorted()[$0.count / 2] }
    }

    /// One sample: the seconds a call of `body` takes, repeated until at least
    /// `minimumSampleTime` has passed.
    private func sampleSeconds(_ body: () throws -> Void) rethrows -> Double {
        var iterations = 0
        let start = DispatchTime.now().uptimeNanoseconds
        var elapsed = 0.0
        repeat {
            try body()
            iterations += 1
            elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        } while elapsed < minimumSampleTime
        return elapsed / Double(iterations)
    }

    /// Measures a workload over `bytes` bytes and reports its throughput in MB/s.
    func throughput(_ workload: String, _ system: String, bytes: Int, _ body: () throws -> Void) rethrows {
        let s = try medianSeconds(body)
        record(Result(workload: workload, system: system, value: Double(bytes) / s / 1e6, unit: "MB/s", seconds: s))
    }

    /// Measures one operation and reports nanoseconds per call.
    func latency(_ workload: String, _ system: String, _ body: () throws -> Void) rethrows {
        let s = try medianSeconds(body)
        record(Result(workload: workload, system: system, value: s * 1e9, unit: "ns/op", seconds: s))
    }

    /// Records a measurement made elsewhere (seconds per operation).
    func record(_ r: Result) {
        results.append(r)
        print("\(r.workload)\t\(r.system)\t\(format(r.value))\t\(r.unit)")
        fflush(nil)  // all streams: keeps lines visible when piped
    }

    /// Prints, for each workload, how many times faster `system` is than each other system.
    func printRatios(of system: String) {
        print("\n# ratios: how many times faster \(system) is (other system's time / \(system)'s time)")
        for r in results where r.system == system {
            for other in results where other.workload == r.workload && other.system != system {
                print("\(r.workload)\t\(system) vs \(other.system)\t\(format(other.seconds / r.seconds))\tx")
            }
        }
    }

    private func format(_ v: Double) -> String {
        v >= 100 ? String(Int(v.rounded())) : String(format: "%.2f", v)
    }
}

/// Keeps a value alive and opaque to the optimiser.
@inline(never) func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
