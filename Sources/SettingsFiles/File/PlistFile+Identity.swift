#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PlistFile.Identity {
    /// The file's modification time as a date.
    public var modificationDate: Date {
        Date(timeIntervalSince1970: Double(modifiedSeconds) + Double(modifiedNanoseconds) / 1e9)
    }
}

extension PlistFile {
    /// A file held open so that its inode cannot be freed, and so cannot be given to another
    /// file: while a writer holds the file it last read or wrote, a file found at the path with
    /// that file's device and inode is that very file, not a new one that got the number back.
    ///
    /// An ``Identity`` alone cannot tell: ext4 hands a replacement the inode number an earlier
    /// replacement freed, and where the clock that stamps files is coarse (kernels before 6.13
    /// stamp with a tick of up to 10 ms; some file systems keep whole seconds), two replacements
    /// of the same size within one tick then have the same identity as the file before them,
    /// and a writer that trusted it would save over the other writers' values with its stale
    /// copy. Closed when the last copy of what holds it goes.
    ///
    /// A process holds at most ``budget`` files this way (each store holds two: its file and
    /// its history journal); past it, a `Held` is not ``isHolding``, its holder trusts no
    /// identity, and reads the file again at its next change.
    package final class Held: Sendable {
        /// The open descriptor (read-only, or the one the file was written through), open for
        /// as long as this lives.
        let fd: Int32
        /// The identity of the file when it was taken.
        package let identity: Identity
        /// Whether this counts as holding the file (within ``budget``): only then is its
        /// identity to be trusted after this is kept.
        package let isHolding: Bool

        /// The most files held at once: an eighth of the descriptors the process may open
        /// (`RLIMIT_NOFILE`), at most 1,024 (128 with the usual limit of 1,024).
        static let budget: Int = {
            var limit = rlimit()
            #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
            #else
            let resource = RLIMIT_NOFILE
            #endif
            guard getrlimit(resource, &limit) == 0 else { return 64 }
            let soft = Int(clamping: limit.rlim_cur)  // "infinity" is the largest value: clamped
            return max(0, min(1024, soft / 8))
        }()
        /// How many are holding now.
        private static let holding = Atomic<Int>(0)

        init(fd: Int32, identity: Identity) {
            self.fd = fd
            self.identity = identity
            if Self.holding.wrappingAdd(1, ordering: .relaxed).newValue <= Self.budget {
                isHolding = true
            } else {
                Self.holding.wrappingSubtract(1, ordering: .relaxed)
                isHolding = false
            }
        }

        deinit {
            close(fd)
            if isHolding { Self.holding.wrappingSubtract(1, ordering: .relaxed) }
        }

        /// `self` when it counts as holding the file, else `nil`: what a holder keeps.
        package var kept: Held? { isHolding ? self : nil }

        /// Opens `path` to hold it when it is still the file with `identity` (never through a
        /// link, never blocking); `nil` when it is not (changed or replaced since), or cannot be
        /// opened: then the identity should not be trusted either.
        package static func take(_ path: String, as identity: Identity) -> Held? {
            let fd = PlistFile.retrying { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) }
            guard fd >= 0 else { return nil }
            var s = stat()
            guard fstat(fd, &s) == 0, Identity(s) == identity else {
                close(fd)
                return nil
            }
            return Held(fd: fd, identity: identity).kept
        }
    }
}
