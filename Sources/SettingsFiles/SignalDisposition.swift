#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a process does with a signal now: the one place that asks, for the library's
/// termination save and the `settings edit` terminal alike.
package enum SignalDisposition {
    /// Whether `number`'s action is to ignore it. A signal the process inherited as ignored
    /// (`nohup`, a shell's background job) stays ignored, as the shells' conventions expect: a
    /// handler installed for it must not make it end the process.
    package static func isIgnored(_ number: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(number, nil, &current) == 0 else { return false }
        #if canImport(Darwin)
        let handler = current.__sigaction_u.__sa_handler
        #else
        let handler = current.__sigaction_handler.sa_handler
        #endif
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}
