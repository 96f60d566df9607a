public import Testing

/// The time limit of a test that would otherwise hang forever on a bug: far above any honest
/// wait on a busy machine (a test's wake-ups can wait behind the whole suite's queued tests, and
/// a machine shared with other builds ran single tests for over a minute), since no test may
/// fail because the machine is busy.
public let hangLimit: TimeLimitTrait.Duration = .minutes(10)
