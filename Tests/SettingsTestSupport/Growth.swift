#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much more CPU time `work(large)` takes than `work(small)`: the least of `tries` runs at
/// each size, measured in the same run, large over small. It counts the calling thread's CPU time
/// (`CLOCK_THREAD_CPUTIME_ID`), not the wall clock, so a busy machine (time spent waiting to run)
/// does not change it: it checks how work grows, not how fast the machine is (no test asserts
/// wall-clock speed). Linear work gives about `large / small`, quadratic work its square.
/// `work` must do its work on the calling thread (no `await`).
public func growth(from small: Int, to large: Int, tries: Int = 3, _ work: (Int) throws -> Void) rethrows -> Double {
    func least(_ size: Int) throws -> Double {
        var best = Double.infinity
        for _ in 0..<tries {
            let start = cpuNanoseconds()
            try work(size)
            best = min(best, cpuNanoseconds() - start)
        }
        return best
    }
    let smallCost = try least(small)
    let largeCost = try least(large)
    return largeCost / max(smallCost, 1)
}

/// True when `ratio` (from ``growth(from:to:tries:_:)``) is linear growth from `small` to `large`
/// items, with room for noise: at most 4x the size ratio (quadratic work is the size ratio itself
/// times more: 10x for sizes 10x apart).
public func isLinear(_ ratio: Double, from small: Int, to large: Int) -> Bool {
    ratio < 4 * Double(large) / Double(small)
}

/// The calling thread's CPU time so far, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`): what a
/// measurement counts so that time spent waiting to run on a busy machine is not counted.
public func cpuNanoseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1e9 + Double(now.tv_nsec)
}

/// The CPU time `body` takes on the calling thread, in nanoseconds (see ``cpuNanoseconds()``).
public func cpuTime(_ body: () throws -> Void) rethrows -> Double {
    let start = cpuNanoseconds()
    try body()
    return cpuNanoseconds() - start
}
