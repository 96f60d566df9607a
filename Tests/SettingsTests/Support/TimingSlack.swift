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

/// The time limit of a test that would otherwise hang forever on a bug. In ThreadSanitizer
/// builds a test's wake-ups can wait behind the whole suite's queued tests (a sanitizer run takes
/// 1-2 minutes in all on a loaded machine), so the limit there is far above any honest wait.
let hangLimit: TimeLimitTrait.Duration = timingSlack > 1 ? .minutes(10) : .minutes(1)
