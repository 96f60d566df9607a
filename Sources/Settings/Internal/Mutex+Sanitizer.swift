public import Synchronization

// ThreadSanitizer cannot see `Mutex` on Linux: its lock lives in the uninstrumented
// Synchronization library, so every value it guards looks raced when two threads take turns.
// CI builds the tests with `-D SETTINGS_TSAN` under `--sanitize=thread`; `locked(_:)` then tells
// the sanitizer about each acquire and release (keyed by the mutex's address). In every
// other build it is exactly `withLock(_:)`.

#if SETTINGS_TSAN
@usableFromInline @_silgen_name("__tsan_acquire") func tsanAcquire(_ address: UnsafeRawPointer)
@usableFromInline @_silgen_name("__tsan_release") func tsanRelease(_ address: UnsafeRawPointer)
#endif

extension Mutex where Value: ~Copyable {
    /// `withLock(_:)`, visible to ThreadSanitizer in sanitizer builds.
    @inlinable
    borrowing func locked<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if SETTINGS_TSAN
        // Keyed by the mutex's own address, taken before the lock: forming a pointer to the
        // guarded value would itself be an access the sanitizer sees before the acquire.
        let address = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
        return try withLock { (value: inout sending Value) throws(E) -> sending Result in
            tsanAcquire(address)
            defer { tsanRelease(address) }
            return try body(&value)
        }
        #else
        return try withLock(body)
        #endif
    }
}
