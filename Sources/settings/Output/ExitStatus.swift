#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Exit statuses, as `defaults` and `plutil` use them.
enum ExitStatus: Int32 {
    case success = 0
    /// The operation failed (unreadable file, malformed plist, missing key).
    case failure = 1
    /// The command line was wrong.
    case usage = 2
}
