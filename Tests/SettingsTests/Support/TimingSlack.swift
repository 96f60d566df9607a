import Testing

/// How many times longer a timing bound may be in this build. ThreadSanitizer builds
/// (`-DSETTINGS_TSAN`) run 5-15x slower, with every suite at once on a loaded machine, so their
/// bounds get room; the bounds still catch what they are there for (a wait that never ends,
/// exponential or quadratic work).
let timingSlack: Double = {
    #if SETTINGS_TSAN
    4
    #else
    1
    #endif
}()

/// The time limit of a test that would otherwise hang forever on a bug: far above any honest
/// wait on a busy machine (a test's wake-ups can wait behind the whole suite's queued tests, and
/// a machine shared with other builds ran single tests for over a minute), since no test may
/// fail because the machine is busy.
let hangLimit: TimeLimitTrait.Duration = .minutes(10)
