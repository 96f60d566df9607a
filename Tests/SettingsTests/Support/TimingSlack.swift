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
